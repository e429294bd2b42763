/**
 * A command left waiting on a promise nobody settles lets Node's event loop run dry, and Node then
 * exits 0. The entry turns that into exit 1 with a message: a batch cut short never reads as success.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBinary, tempConfigDir } from '../helpers.js';

describe('a command that never finishes (a bug)', () => {
  it('exits 1 with a message instead of a silent 0 when nothing is left to wait for', async () => {
    const { dir, cleanup } = tempConfigDir();
    try {
      // Fault injection: every fdatasync (node:fs's, the record's group sync) never calls back and holds nothing
      // open, so the batch waits for ever with an empty event loop (the bin shim's child inherits NODE_OPTIONS).
      const hook = join(dir, 'never-sync.mjs');
      writeFileSync(
        hook,
        "import { createRequire, syncBuiltinESMExports } from 'node:module';\n" +
          "createRequire(import.meta.url)('node:fs').fdatasync = () => {};\n" +
          'syncBuiltinESMExports();\n',
      );
      const csv = join(dir, 'claims.csv');
      writeFileSync(
        csv,
        'customer.email,item.name,item.price,warranty.dateOfPurchase,warranty.warrantyPeriod,shippingAddress.firstName,shippingAddress.lastName,shippingAddress.address1,shippingAddress.city,shippingAddress.zip,shippingAddress.country,storeId,signature,salesChannel,claimCategory,issueType,resolution\n' +
          'c1@example.com,Kettle,10,2026-01-01T00:00:00Z,P1Y,A,B,1 Main St,Town,12345,US,store_1,,IN_STORE,WARRANTY,DAMAGED,RESHIP\n',
      );
      // The token is never used: no request leaves before the row's intent is durable.
      const env = {
        OPCLI_CONFIG_DIR: dir,
        OPCLI_BASE_URL: 'http://127.0.0.1:9',
        OPCLI_TOKEN: 'tok_never_sent',
        NO_COLOR: '1',
        NODE_OPTIONS: `--import=${hook}`,
      };
      const res = await runBinary(['claims', 'file', '--from', csv], { env });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('Error: opcli stopped before the command finished');
      expect(res.stderr).toContain('Hint: Run the same command again');
      expect(res.stdout).toBe('');
      const json = await runBinary(['claims', 'file', '--from', csv, '--jsonl'], { env });
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stderr.trim().split('\n').at(-1) ?? '')).toMatchObject({
        error: { message: expect.stringContaining('opcli stopped before'), exitCode: 1 },
      });
    } finally {
      cleanup();
    }
  });
});
