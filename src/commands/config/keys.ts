import { Argument } from 'commander';
import { UsageError } from '../../core/errors.js';
import { findSettingKey, SETTING_KEYS, type SettingKey } from '../../config/setting-keys.js';
import { completesWith } from '../completion/hints.js';

/** The key named on the command line, or a usage error listing the keys. */
export function requireKey(name: string): SettingKey {
  const key = findSettingKey(name);
  if (!key) throw new UsageError(`Unknown setting "${name}".`, `Known settings: ${SETTING_KEYS.map((k) => k.key).join(', ')}.`);
  return key;
}

/** The `<key>` argument of config get, set and unset: completes to the setting keys. */
export function keyArgument(description = 'setting name'): Argument {
  return completesWith(
    new Argument('<key>', description),
    SETTING_KEYS.map((k) => k.key),
  );
}
