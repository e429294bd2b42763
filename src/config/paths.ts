/** The config folder check lives with the other private-file rules; re-exported for existing callers (the ledger). */
export { ensurePrivateDir } from './private-file.js';
