/**
 * Build-time entry (bin/build.mjs): prints `{ "<words>": "<help text>" }` for every group and verb, so
 * the shim prints help without the bundle. A page that differs between two empty config folders is left out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { runCli } from './program.js';
import { createDeps } from './deps.js';

async function render(words: string[], configDir: string): Promise<string> {
  let out = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      out += String(chunk);
      done();
    },
  });
  const env = { NO_COLOR: '1', OPCLI_CONFIG_DIR: configDir, PATH: process.env.PATH };
  const deps = createDeps({ stdin: Readable.from([]), stdout: sink, stderr: new Writable({ write: (_c, _e, done) => done() }), env, cwd: configDir });
  const code = await runCli(words.length ? [...words, '--help'] : ['--help'], deps);
  await deps.dispose();
  if (code !== 0) throw new Error(`opcli ${words.join(' ')} --help exited ${code}`);
  return out;
}

function commandsOf(text: string): string[] {
  const section = text.split(/^Commands:\n/m)[1]?.split(/\n\n/)[0] ?? '';
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1] as string).filter((name) => name !== 'help');
}

const tmp = mkdtempSync(join(tmpdir(), 'opcli-help-'));
try {
  const pages: Record<string, string> = {};
  const top = await render([], join(tmp, 'a'));
  pages[''] = top;
  const all: string[][] = [];
  for (const group of commandsOf(top)) {
    all.push([group]);
    for (const verb of commandsOf(await render([group], join(tmp, 'a')))) all.push([group, verb]);
  }
  for (const words of all) {
    const a = await render(words, join(tmp, 'a'));
    if (a === (await render(words, join(tmp, 'b')))) pages[words.join(' ')] = a;
  }
  process.stdout.write(JSON.stringify(pages));
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
