/**
 * `giftcard repair`: sets the damaged lines of the ledger aside so money can move again, without
 * forgetting them. The damaged file is kept whole as a copy; each damaged line is replaced, in
 * place (line numbers stay), by a `set-aside` record naming the line, what was wrong with it and,
 * when its beginning still names one, the claim or order, which is then held as `uncertain`. A
 * line written by a newer opcli is never set aside: upgrading reads it. No prompt, no print.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, constants, fsyncSync, renameSync, writeSync } from 'node:fs';
import { openPrivateFile, readPrivateFile } from '../config/private-file.js';
import { UsageError } from '../errors.js';
import { blockingDamage, type DamagedLine, describeDamage, readRecordLines } from '../record-lines.js';
import { type Ledger, LedgerRecord, type SetAsideRecord, TORN_REASON } from './ledger.js';

/** What a repair did, or would do. */
export interface RepairPlan {
  ledger: string;
  /** The damaged lines that are set aside. */
  lines: DamagedLine[];
  /** Where the damaged file is kept (after the repair). */
  copy?: string;
}

/** Why a line was set aside, after "Line N of the ledger …". */
function reason(d: DamagedLine): string {
  return `was set aside by \`opcli giftcard repair\` (${describeDamage(d).replace(/^line \d+ /, '')})`;
}

/** The damaged lines the repair would set aside (none when the ledger reads cleanly); refuses lines of a newer opcli. */
export function planRepair(ledger: Ledger): RepairPlan {
  const lines = blockingDamage(ledger.read().damaged);
  const newer = lines.filter((d) => d.kind === 'newer');
  if (newer.length) {
    throw new UsageError(
      `The gift card ledger ${ledger.path} has line(s) ${newer.map((d) => d.line).join(', ')} written by a newer version of opcli: they are records this version cannot read, not damage, and are not set aside.`,
      'Upgrade opcli (npm install -g opcli) to read them.',
    );
  }
  return { ledger: ledger.path, lines };
}

function writeNew(path: string, text: string): void {
  const fd = openPrivateFile(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 'gift card ledger copy') as number;
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Sets the damaged lines aside under the ledger's lock: the file is kept whole at `<ledger>.damaged-<time>`,
 * then replaced (atomically, by a rename) with each damaged line turned into a `set-aside` record.
 */
export async function repairLedger(ledger: Ledger, env: { now(): number; user: string }): Promise<RepairPlan> {
  return ledger.withLock(async () => {
    const plan = planRepair(ledger);
    if (plan.lines.length === 0) return plan;
    const text = readPrivateFile(ledger.path, 'gift card ledger') ?? '';
    const at = new Date(env.now()).toISOString();
    const byLine = new Map(plan.lines.map((d) => [d.line, d]));
    const out = text.split('\n').map((line, i) => {
      const d = byLine.get(i + 1);
      if (!d) return line;
      const record: SetAsideRecord = {
        v: 1,
        type: 'set-aside',
        issuance: d.issuance ?? `damaged-line-${d.line}`,
        key: d.key ?? 'unknown',
        at,
        user: env.user,
        line: d.line,
        reason: d.kind === 'torn' ? TORN_REASON : reason(d),
      };
      return JSON.stringify(LedgerRecord.parse(record));
    });
    let repaired = out.join('\n');
    if (!repaired.endsWith('\n')) repaired += '\n';
    const copy = `${ledger.path}.damaged-${at.replace(/[:.]/g, '-')}`;
    writeNew(copy, text);
    const temp = `${ledger.path}.repair-${randomUUID()}`;
    writeNew(temp, repaired);
    renameSync(temp, ledger.path);
    // The lines read back cleanly, or the repair says so rather than leaving a file that stops money.
    const left = blockingDamage(readRecordLines(repaired, 1, (v) => LedgerRecord.safeParse(v).data).damaged);
    if (left.length) throw new UsageError(`The repaired ledger ${ledger.path} still has damaged line(s) ${left.map((d) => d.line).join(', ')}.`);
    return { ...plan, copy };
  });
}
