import type { IO, Prompter } from './deps.js';

/** Questions through @inquirer/prompts, drawn on stderr so stdout stays data. */
export async function createInquirerPrompter(io: IO): Promise<Prompter> {
  const prompts = await import('@inquirer/prompts');
  const context = { input: io.stdin, output: io.stderr, clearPromptOnDone: false };
  return {
    input: (o) =>
      prompts.input({ message: o.message, default: o.default, validate: o.validate }, { ...context, signal: o.signal, clearPromptOnDone: !!o.secret }),
    password: (o) => prompts.password({ message: o.message, mask: '*', validate: o.validate }, context),
    confirm: (o) => prompts.confirm({ message: o.message, default: o.default }, context),
    select: (o) => prompts.select({ message: o.message, choices: o.choices, default: o.default }, context),
  };
}
