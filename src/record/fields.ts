/**
 * The pieces every record of actions (the record of claims, a batch journal) shares in its lines'
 * text: the form of a key it indexes, and an optional field as a fast writer splices it in.
 */

/** A key (or similarity fingerprint) as a record indexes it: hex, at least 64 bits. */
export const HEX64 = /^[0-9a-f]{16}/;

/** `,"name":"text"` with the text quoted by JSON.stringify, or nothing when there is no text: an optional field of a hand-written line. */
export const quoteField = (text: string | undefined, name: string): string => (text === undefined ? '' : `,"${name}":${JSON.stringify(text)}`);
