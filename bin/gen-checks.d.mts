/** Types of bin/gen-checks.mjs, for the tests that run the generator. */
export declare const CHECKS: { name: string; module: string; schema: string; acceptOnly?: boolean }[];
/** The source of a JS module exporting one predicate per schema. */
export declare function emitChecks(schemas: Record<string, unknown>, acceptOnly?: string[]): string;
/** The generated module's source for the schemas named in CHECKS. */
export declare function generateChecks(root?: string): Promise<string>;
