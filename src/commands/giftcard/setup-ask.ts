/** The questions of `giftcard setup` on a terminal, in plain words; Enter keeps the current value. */
import type { Deps } from '../../cli/deps.js';
import { findSettingKey } from '../../config/setting-keys.js';
import { getAtPath } from '../../config/settings.js';
import { DEFAULT_CURRENCY } from '../../giftcard/money.js';
import { normaliseValues } from '../../giftcard/setup.js';
import { parseValue } from '../config/index.js';

/**
 * The settings `setup` writes, in the order it asks for them, each with its question in plain words;
 * short, so that the question and its value in parentheses fit an 80-column line.
 */
export const SETUP_QUESTIONS = {
  'provider-name': 'Provider name, one word (e.g. giftly):',
  'provider-api-url': 'Provider API address (e.g. https://api.giftly.example):',
  'provider-token': 'Credit API token (hidden as you type):',
  'shop-url': 'Store domain at the provider (e.g. shop.example):',
  'trigger-id': 'Trigger workflow id, or its execute URL',
  'trigger-url': 'Trigger execute URL, without the id:',
  'native-url': 'Storefront gift card address, last fallback',
  currency: 'Currency of the amounts you issue:',
} as const;
/** The settings a person may leave empty: the question says what Enter does (keep the stored value, or skip). */
const OPTIONAL = new Set<string>(['trigger-id', 'native-url']);
export type SetupKey = keyof typeof SETUP_QUESTIONS;

/** Asks for each provider setting and answers the values that changed, as typed. */
export async function askSettings(deps: Deps, profile: string): Promise<Record<string, string>> {
  const settings = (await deps.settings()).getProfile(profile) ?? {};
  const secrets = (await deps.credentials()).read(profile);
  const prompter = await deps.prompter();
  const values: Record<string, string> = {};
  deps.err(`Gift card provider settings for profile "${profile}". Enter keeps the value in parentheses.\n`);
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
    const stored = getAtPath(settings, key.path);
    const current = typeof stored === 'string' ? stored : undefined;
    // An optional setting says what Enter does: keep what is stored, or skip it.
    const message = OPTIONAL.has(name) ? `${question} (Enter ${current ? 'keeps the stored one' : 'to skip'}):` : question;
    // The currency shows its default (USD) when none is stored; Enter then keeps the default, nothing is written.
    const shown = current ?? (name === 'currency' ? DEFAULT_CURRENCY : undefined);
    const answer = (await prompter.input({ message, default: shown, validate })).trim();
    // Kept as typed: the caller normalises every value once and says what it changed.
    if (answer && answer !== shown) values[name] = answer;
  }
  return values;
}
