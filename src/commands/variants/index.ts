import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { isOutcomeUncertain, OpcliError, UsageError } from '../../core/errors.js';
import { addBodyVerb, printAnswer, printDryRun } from '../body-verb.js';
import { fieldKinds } from '../../input/flags.js';
import { ProductVariant } from '../../schemas.js';
import { safeLine } from '../../text/safe.js';
import { checkText } from '../../core/flags.js';
import { PATHS } from '../../api/service.js';
import { buildBody, readDataObject } from '../../input/data.js';

interface CreateOptions {
  productId: string;
  data?: string;
  flags: Record<string, unknown>;
  dryRun: boolean;
  json: boolean;
}

/** Every variant field but productId, which is the argument. */
const KINDS = fieldKinds(ProductVariant).filter((k) => k.name !== 'productId');

/** `opcli variants`: create product variants. */
export function register(program: Command, deps: Deps): void {
  const group = program
    .command('variants')
    .description('Create product variants')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli variants create prod_1 --status ACTIVE --name "Mug, blue" --price 12.5 --inventory-quantity 40 --product-type SIMPLE`,
    );

  addBodyVerb(group, {
    name: 'create',
    description: 'Create a product variant, a child of a product (POST /v2/products/{productId}/children)',
    argument: ['<productId>', "the parent product; also sent as the body's productId"],
    holds: 'the variant fields',
    kinds: KINDS,
    dryRun: 'print the request (method, path, body) and send nothing',
    json: 'print the answer as JSON',
  })
    .addHelpText(
      'after',
      `
Required: --status, --name, --price, --inventory-quantity, --product-type. inventoryQuantity is the
remaining stock as a whole number (the spec declares it an enum of FULL/SIMPLE but describes it as
stock; inventory tracking goes in --inventory-type).

Examples:
  $ opcli variants create prod_1 --status ACTIVE --name "Mug, blue" --price 12.5 \\
      --inventory-quantity 40 --product-type SIMPLE --inventory-type SIMPLE --in-stock
  $ opcli variants create bundle_1 --data bundle.json --bundle-product-id prod_1 --bundle-product-id prod_2
  $ opcli variants create prod_1 --data variant.json --dry-run`,
    )
    .action(async (productId: string, flags: Record<string, unknown>) => {
      // `.` and `..` are refused where the path is built.
      checkText('The productId argument', productId, 'Pass the id of the parent product.');
      const { data, dryRun, json, ...fields } = flags as { data?: string; dryRun?: boolean; json?: boolean } & Record<string, unknown>;
      await runCreate({ productId, data, flags: fields, dryRun: !!dryRun, json: !!json }, deps);
    });
}

/** Assembles, validates and sends (or, with --dry-run, prints) the variant. */
async function runCreate(opts: CreateOptions, deps: Deps): Promise<void> {
  // The path names the product; a --data file naming another one is a mistake, not an override.
  const doc = opts.data !== undefined ? await readDataObject(deps, opts.data) : {};
  if (doc.productId !== undefined && doc.productId !== opts.productId) {
    throw new UsageError(
      `The --data productId "${String(doc.productId)}" differs from the argument "${opts.productId}".`,
      'The variant is created under the product named by the argument; make the two agree or drop productId from the file.',
    );
  }
  const variant = buildBody(ProductVariant, KINDS, doc, opts.flags, 'product variant', { productId: opts.productId });
  warnAboutProductImage(deps, variant.productImage);
  const path = PATHS.variants(opts.productId);
  if (opts.dryRun) {
    printDryRun(deps, 'POST', path, variant, opts.json);
    return;
  }
  const api = await deps.api();
  let answer: unknown;
  try {
    answer = await api.createVariant(opts.productId, variant, deps.signal);
  } catch (error) {
    if (!isOutcomeUncertain(error)) throw error;
    // A POST whose answer was lost may have created the variant; resending could create it twice.
    throw new OpcliError(`The variant may or may not have been created: ${(error as Error).message}`, {
      hint: "It was not sent again automatically. Check the product's children before running the command again.",
      cause: error,
    });
  }
  await printAnswer(deps, opts.json, answer, `Variant "${variant.name}" created under product ${opts.productId}.`);
}

/** CHOICE (docs/spec-choices.md#image-urls): productImage is typed a string, so it is sent as given, with a warning unless http(s). */
function warnAboutProductImage(deps: Deps, image: string | undefined): void {
  if (image === undefined) return;
  const scheme = URL.canParse(image) ? new URL(image).protocol : undefined;
  if (scheme === 'http:' || scheme === 'https:') return;
  deps.err(`Warning: productImage "${safeLine(image)}" is not an http:// or https:// URL; it is sent as given.\n`);
}
