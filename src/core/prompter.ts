import type { IO, Prompter } from './ports.js';
import { InterruptedError } from './errors.js';

/** Turns a prompt closed with Ctrl-C into "Cancelled." (exit 130); other failures pass through. */
async function cancellable<T>(ask: () => Promise<T>): Promise<T> {
  try {
    return await ask();
  } catch (error) {
    // Ctrl-C at a question: the prompt's raw mode turns it into a key, and inquirer into ExitPromptError.
    if (error instanceof Error && error.name === 'ExitPromptError') throw new InterruptedError('Cancelled.');
    throw error;
  }
}

/** How questions are asked: `accessible` (OPCLI_ACCESSIBLE, the setting) asks in plain lines; `signal` (Ctrl-C) withdraws them. */
export interface PrompterOptions {
  accessible?: boolean;
  signal?: AbortSignal;
}

/** Questions on stderr (stdout stays data) through @inquirer/prompts; in the accessible mode plain lines a screen reader reads once. */
export async function createInquirerPrompter(io: IO, options: PrompterOptions = {}): Promise<Prompter> {
  // Start-up fast path (ARCHITECTURE.md, bench/startup.mjs): the prompt library loads only when a question is asked.
  const prompts = await import('@inquirer/prompts');
  const context = { input: io.stdin, output: io.stderr, clearPromptOnDone: false };
  const password: Prompter['password'] = (o) => cancellable(() => prompts.password({ message: o.message, mask: '*', validate: o.validate }, context));
  const input: Prompter['input'] = (o) =>
    cancellable(() =>
      prompts.input({ message: o.message, default: o.default, validate: o.validate }, { ...context, signal: o.signal, clearPromptOnDone: !!o.secret }),
    );
  if (options.accessible) return plainPrompter(io, { password, secretInput: input }, options.signal);
  return {
    input,
    password,
    confirm: (o) => cancellable(() => prompts.confirm({ message: o.message, default: o.default }, context)),
    select: (o) => cancellable(() => prompts.select({ message: o.message, choices: o.choices, default: o.default }, context)),
  };
}

/** One line read from stdin after `question` is written on stderr; Ctrl-C, the end of input or `signal` cancel it. */
async function readLine(io: IO, question: string, signals: (AbortSignal | undefined)[]): Promise<string> {
  // Start-up fast path, as the prompt library above: readline only for the accessible mode's questions.
  const { createInterface } = await import('node:readline');
  return new Promise((resolve, reject) => {
    // terminal: false: the terminal echoes what is typed; readline draws nothing and moves no cursor.
    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
    const live = signals.filter((s): s is AbortSignal => s !== undefined);
    let answered = false;
    /** Settles once: stops listening, then closes readline (whose 'close' then finds the question answered). */
    const settle = (answer: () => void) => {
      if (answered) return;
      answered = true;
      for (const s of live) s.removeEventListener('abort', cancel);
      answer();
      rl.close();
    };
    const cancel = () => settle(() => reject(new InterruptedError('Cancelled.')));
    if (live.some((s) => s.aborted)) return cancel();
    for (const s of live) s.addEventListener('abort', cancel, { once: true });
    rl.on('SIGINT', cancel);
    rl.on('close', () => settle(() => reject(new InterruptedError('Cancelled: the input ended before an answer.'))));
    io.stderr.write(question);
    rl.once('line', (line) => settle(() => resolve(line)));
  });
}

/** The accessible prompter: each question one plain line, a refused answer said on its own line and asked again. */
function plainPrompter(io: IO, secret: { password: Prompter['password']; secretInput: Prompter['input'] }, runSignal?: AbortSignal): Prompter {
  const say = (text: string) => io.stderr.write(`${text}\n`);
  return {
    async input(o) {
      // A secret answer (a pasted redirect URL with its code) is taken off the screen once given: the usual prompt does that.
      if (o.secret) return secret.secretInput(o);
      for (;;) {
        const keep = o.default ? ` (Enter for ${o.default})` : '';
        const raw = await readLine(io, `${o.message}${keep} `, [runSignal, o.signal]);
        const value = raw.trim() === '' && o.default !== undefined ? o.default : raw;
        const verdict = o.validate ? o.validate(value) : true;
        if (verdict === true) return value;
        say(`Not accepted: ${verdict}`);
      }
    },
    password: secret.password,
    async confirm(o) {
      const hint = o.default === undefined ? 'yes or no' : `yes or no, Enter for ${o.default ? 'yes' : 'no'}`;
      for (;;) {
        const answer = (await readLine(io, `${o.message} (${hint}) `, [runSignal])).trim().toLowerCase();
        if (answer === '' && o.default !== undefined) return o.default;
        if (answer === 'y' || answer === 'yes') return true;
        if (answer === 'n' || answer === 'no') return false;
        say('Not accepted: answer yes or no.');
      }
    },
    async select(o) {
      const n = o.choices.length;
      const at = o.default === undefined ? -1 : o.choices.findIndex((c) => c.value === o.default);
      const list = o.choices.map((c, i) => `  ${i + 1}. ${c.name}${c.description ? ` (${c.description})` : ''}`).join('\n');
      say(`${o.message}\n${list}`);
      for (;;) {
        const keep = at >= 0 ? `, Enter for ${at + 1}` : '';
        const answer = (await readLine(io, `Type a number from 1 to ${n}${keep}: `, [runSignal])).trim();
        if (answer === '' && at >= 0) return o.choices[at]?.value as (typeof o.choices)[number]['value'];
        const number = /^\d+$/.test(answer) ? Number(answer) : Number.NaN;
        // The choice's own name is taken too (a person who types "DAMAGED" means it).
        const chosen = o.choices[number - 1] ?? o.choices.find((c) => c.name.toLowerCase() === answer.toLowerCase());
        if (chosen) return chosen.value;
        say(`Not accepted: "${answer}" is not one of the numbers 1 to ${n}.`);
      }
    },
  };
}
