import type { IO, Prompter } from './deps.js';
import { InterruptedError } from './errors.js';

/** Ctrl-C at a question: the prompt's raw mode turns it into a key, and inquirer into ExitPromptError. */
export function isPromptCancel(error: unknown): boolean {
  return error instanceof Error && error.name === 'ExitPromptError';
}

/** Turns a prompt closed with Ctrl-C into "Cancelled." (exit 130); other failures pass through. */
async function cancellable<T>(ask: () => Promise<T>): Promise<T> {
  try {
    return await ask();
  } catch (error) {
    if (isPromptCancel(error)) throw new InterruptedError('Cancelled.');
    throw error;
  }
}

/** Questions through @inquirer/prompts, drawn on stderr so stdout stays data. Ctrl-C at any of them cancels (exit 130). */
export async function createInquirerPrompter(io: IO): Promise<Prompter> {
  const prompts = await import('@inquirer/prompts');
  const context = { input: io.stdin, output: io.stderr, clearPromptOnDone: false };
  return {
    input: (o) =>
      cancellable(() =>
        prompts.input({ message: o.message, default: o.default, validate: o.validate }, { ...context, signal: o.signal, clearPromptOnDone: !!o.secret }),
      ),
    password: (o) => cancellable(() => prompts.password({ message: o.message, mask: '*', validate: o.validate }, context)),
    confirm: (o) => cancellable(() => prompts.confirm({ message: o.message, default: o.default }, context)),
    select: (o) => cancellable(() => prompts.select({ message: o.message, choices: o.choices, default: o.default }, context)),
  };
}
