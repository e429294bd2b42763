/**
 * CHOICE (docs/spec-choices.md#file-names): whether two names in one folder name one file not yet
 * created, by the rules of the platform's usual disks: Windows ignores case and trailing dots and
 * spaces, and reaches a file by its 8.3 short name too (Microsoft's "Naming Files, Paths, and
 * Namespaces"); macOS ignores case and Unicode normal forms; elsewhere names are bytes.
 */

/** A name as the platform's disks compare it. */
function folded(name: string, platform: NodeJS.Platform): string {
  if (platform === 'win32')
    return name
      .replace(/[. ]+$/, '')
      .toUpperCase()
      .toLowerCase();
  if (platform === 'darwin') return name.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
  return name;
}

/** An 8.3 short name: up to 6 characters, `~` and a number, then up to 3 characters of extension. */
const SHORT_NAME = /^([^.~]{1,6})~(\d{1,6})(?:\.([^.]{1,3}))?$/;

/** The characters Windows keeps of a long name in its short name: upper case, no spaces or dots, `+,;=[]` as `_`. */
const shortChars = (text: string) =>
  text
    .replace(/[ .]/g, '')
    .replace(/[+,;=[\]]/g, '_')
    .toUpperCase();

/**
 * Whether `short` may be the 8.3 short name Windows gives `long`: its first characters are the
 * long base's (two are kept when Windows puts a hash after them, from the fifth name on), and its
 * extension the start of the long one's.
 */
function mayBeShortName(short: string, long: string): boolean {
  const match = SHORT_NAME.exec(short.toUpperCase());
  if (!match || SHORT_NAME.test(long.toUpperCase())) return false;
  const [, base = '', , ext = ''] = match;
  const dot = long.lastIndexOf('.');
  const longBase = shortChars(dot > 0 ? long.slice(0, dot) : long);
  const longExt = shortChars(dot > 0 ? long.slice(dot + 1) : '').slice(0, 3);
  return longBase.startsWith(base.slice(0, 2)) && ext === longExt;
}

/** Whether the names `a` and `b`, in one folder, name one file on `platform` (neither file existing yet). */
export function sameFileName(a: string, b: string, platform: NodeJS.Platform = process.platform): boolean {
  if (folded(a, platform) === folded(b, platform)) return true;
  return platform === 'win32' && (mayBeShortName(a, b) || mayBeShortName(b, a));
}

/** Why two different names are one file on `platform`, for a message; undefined where names are bytes. */
export function sameNameRule(platform: NodeJS.Platform = process.platform): string | undefined {
  if (platform === 'win32') return 'Windows does not tell file names apart by letter case or trailing dots, and reaches a file by its short 8.3 name too';
  if (platform === 'darwin') return "macOS's disks do not tell file names apart by letter case or by how an accent is encoded";
  return undefined;
}
