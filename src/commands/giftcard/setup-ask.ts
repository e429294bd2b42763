/** The questions of `giftcard setup` on a terminal, in plain words; Enter keeps the current value. */
import type { Deps } from '../../deps.js';
import { findSettingKey } from '../../config/setting-keys.js';
import { getAtPath } from '../../config/settings.js';
import { normaliseValues } from '../../giftcard/setup.js';
import { parseValue } from '../config/values.js';

/** The settings `setup` writes, in the order it asks for them, each with its question in plain words. */
export const SETUP_QUESTIONS = {
  'provider-name': "Gift card provider's name, one word (e.g. giftly):",
  'provider-api-url': "Provider's API address (e.g. https://api.giftly.example):",
  'provider-token': 'Credit API token from the provider (hidden as you type):',
  'shop-url': "Your store's domain at the provider (e.g. shop.example):",
  'trigger-id': 'Trigger workflow: paste its execute URL, or just the id at its end (Enter to skip):',
  'trigger-url': 'Execute URL of the trigger workflow, without the id:',
  'native-url': "Storefront's own gift card address, the last fallback (Enter to skip):",
  currency: 'Currency of the amounts you issue (e.g. USD):',
} as const;
export type SetupKey = keyof typeof SETUP_QUESTIONS;

/** Asks for each provider setting and answers the values that changed, as typed. */
export async function askSettings(deps: Deps, profile: string): Promise<Record<string, string>> {
  const settings = (await deps.settings()).getProfile(profile) ?? {};
  const secrets = (await deps.credentials()).read(profile);
  const prompter = await deps.prompter();
  const values: Record<string, string> = {};
  deps.err(`Gift card provider settings for profile "${profile}". Enter keeps the value in brackets.\n`);
  for (const [name, question] of Object.entries(SETUP_QUESTIONS)) {
    const key = findSettingKey(name);
    if (!key) continue;
    // A whole execute URL pasted for the trigger id already gave the trigger URL.
    if (name === 'trigger-url' && values['trigger-id'] && normaliseValues({ 'trigger-id': values['trigger-id'] }).values['trigger-url']) continue;
    const validate = (v: string) => {
      if (!v) return true;
      try {
        parseValue(key, normaliseValues({ [name]: v }).values[name] as string);
        return true;
      } catch (error) {
        return error instanceof Error ? error.message : 'invalid value';
      }
    };
    if (key.secret) {
      const keep = secrets.providerToken ? ' Enter keeps the stored one.' : '';
      const answer = await prompter.password({ message: `${question}${keep}`, validate });
      if (answer) {
        deps.redactor.add(answer);
        values[name] = answer;
      }
      continue;
    }
    const current = getAtPath(settings, key.path);
    const answer = (await prompter.input({ message: question, default: typeof current === 'string' ? current : undefined, validate })).trim();
    // Kept as typed: the caller normalises every value once and says what it changed.
    if (answer && answer !== current) values[name] = answer;
  }
  return values;
}
