/**
 * The doc-test convention: the fenced ```sh blocks of a guide are run, in order, one bash script
 * per block; ```text (and any other) blocks are not. A line ending in `# exit N` must exit with N;
 * any other failing command fails the block, naming the guide line.
 */

/** One runnable block of a guide. */
export interface ShBlock {
  /** 1-based guide line of the block's first content line (the line after the opening fence). */
  line: number;
  /** The block's lines, as written. */
  lines: string[];
}

/** The ```sh (or ```bash) blocks of a markdown text, with where each starts. */
export function shBlocks(markdown: string): ShBlock[] {
  const blocks: ShBlock[] = [];
  const lines = markdown.split('\n');
  let fence: { marker: string; run: boolean; start: number; lines: string[] } | undefined;
  for (const [i, line] of lines.entries()) {
    if (!fence) {
      const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(line);
      if (open) fence = { marker: open[2] as string, run: open[3] === 'sh' || open[3] === 'bash', start: i + 2, lines: [] };
      continue;
    }
    if (line.trim().startsWith(fence.marker) && line.trim().replace(/[`~]/g, '') === '') {
      if (fence.run) blocks.push({ line: fence.start, lines: fence.lines });
      fence = undefined;
      continue;
    }
    fence.lines.push(line);
  }
  return blocks;
}

/** The failure markers the generated scripts print on stderr. */
export const FAIL_MARK = '__DOCTEST_FAIL__';
export const EXIT_MARK = '__DOCTEST_EXIT__';

const PRELUDE = [`set -E -o pipefail`, `trap '__rc=$?; echo "${FAIL_MARK} $((LINENO - 2)) $__rc" >&2; exit 97' ERR`];

/**
 * The bash script of one block. Each block line stays on its own script line (after a two-line
 * prelude) so a failure maps back to the guide; a command whose last line ends in `# exit N` is
 * wrapped so its status is compared with N instead of failing the block.
 */
export function blockScript(block: ShBlock): string {
  const out = [...PRELUDE];
  let start = -1;
  for (const [i, raw] of block.lines.entries()) {
    if (start < 0) start = out.length;
    if (/\\$/.test(raw)) {
      out.push(raw);
      continue;
    }
    const expect = /\s#\s*exit\s+(\d+)\s*$/.exec(raw);
    if (expect) {
      const code = expect[1];
      out.push(
        `${raw.slice(0, expect.index)} ; then __rc=0; else __rc=$?; fi; if [ "$__rc" != ${code} ]; then echo "${EXIT_MARK} ${i + 1} $__rc ${code}" >&2; exit 98; fi`,
      );
      out[start] = `if ${out[start]}`;
    } else {
      out.push(raw);
    }
    start = -1;
  }
  return `${out.join('\n')}\n`;
}

/** What went wrong in a block's run, in words naming the guide line, or undefined when it passed. */
export function blockFailure(guide: string, block: ShBlock, code: number, output: string): string | undefined {
  const at = (n: number) => `${guide}:${block.line + n - 1}: ${(block.lines[n - 1] ?? '').trim()}`;
  const exit = new RegExp(`${EXIT_MARK} (\\d+) (\\d+) (\\d+)`).exec(output);
  if (exit) return `${at(Number(exit[1]))}\n  exited ${exit[2]}, the guide says # exit ${exit[3]}\n${output}`;
  const fail = new RegExp(`${FAIL_MARK} (\\d+) (\\d+)`).exec(output);
  if (fail) return `${at(Number(fail[1]))}\n  exited ${fail[2]} (add "# exit ${fail[2]}" if that is what the guide means)\n${output}`;
  if (code !== 0) return `${guide}:${block.line}: the block exited ${code}\n${output}`;
  if (/unexpected failure/i.test(output)) return `${guide}:${block.line}: the output reports an unexpected failure\n${output}`;
  if (/^\s+at .+:\d+:\d+\)?$/m.test(output)) return `${guide}:${block.line}: the output holds a stack trace\n${output}`;
  return undefined;
}
