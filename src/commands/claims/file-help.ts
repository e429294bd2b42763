/** The help text of `claims file`: examples, how a batch knows its rows, exit codes. */
import type { ClaimField } from '../../claims/fields.js';

/** The help line of a field flag: its path, type, and whether it is required. */
export function describeField(field: ClaimField): string {
  const type =
    field.type === 'enum'
      ? `one of ${field.values?.join(', ')}`
      : field.type === 'array'
        ? 'URL, repeatable'
        : field.type === 'boolean'
          ? 'switch'
          : field.type;
  return `${field.key} (${type})${field.required ? ', required' : ''}${field.key === 'storeId' ? "; default: the profile's store-id" : ''}`;
}

export const FILE_HELP = `
Examples:
  $ opcli claims file --customer-email alice@example.com --item-name Kettle --item-price 49.99 \\
      --warranty-date-of-purchase 2024-05-01T10:00:00Z --warranty-period P1Y \\
      --shipping-first-name Alice --shipping-last-name Example --shipping-address1 "1 Main St" \\
      --shipping-city Springfield --shipping-zip 62701 --shipping-country US --signature "" \\
      --sales-channel IN_STORE --claim-category WARRANTY --issue-type DEFECTIVE_ITEM --resolution RESHIP
  $ opcli claims file --data claim.json --resolution STORE_CREDIT     # flags override the file
  $ opcli claims file                                                 # on a terminal: asks for each field
  $ opcli claims template --csv > claims.csv                          # then fill it in a spreadsheet
  $ opcli claims file --from claims.csv --validate-only
  $ opcli claims file --from claims.csv --dry-run                     # what a run would send, refuse or hold
  $ opcli claims file --from claims.csv --concurrency 8 --out results.csv
  $ opcli claims file --from claims.csv --rate 40/s                    # when you know the server's budget
  $ opcli claims file --from claims.csv --retry-uncertain             # once the dashboard shows none of the uncertain rows
  $ opcli claims file --from claims.csv --key rma                     # rows known by your own id column
  $ opcli claims file --from export.csv --delimiter '|'               # a separator other than , ; or tab

A CSV may be UTF-8 or UTF-16 with its byte order mark (Windows PowerShell's \`>\` writes UTF-16); its
separator (comma, semicolon or tab) is told from the header, or given with --delimiter; in a
semicolon file a price may have a decimal comma (249,99). A date alone (2024-05-01) is sent as noon
UTC that day; a day/month form such as 05/01/2024 is refused (write 2024-01-05 or 2024-05-01).

A batch records every row in the record of claims before sending it, under the batch's name
(<input>.journal.jsonl, or --journal): a rerun asks it what each row became. A row is known by its content
(the parsed claim, in a form a spreadsheet re-save does not change, plus its count among identical
rows), or by --key: edit, sort or re-save the file and run the same command again; rows filed,
rejected or uncertain are not sent again, whatever their line. A new row that looks like a filed
one (same e-mail and item) is held (exit 3) until you pass --allow-similar. The record of claims
(one per store, shared by every file, journal and profile; with record-url, by the whole team in its
PostgreSQL database) holds a row filed from another file or a
copy, and the second copy of a row repeated in a file, until --allow-duplicates; one claim (--data,
flags, prompts) it holds is refused (exit 3) until --force; on a terminal one claim is shown and
confirmed first (--yes skips). A journal of 0.2.0 at the batch's name is read into the record once,
and counts only for the service and store its header names. --out is never written through a link,
nor when another user owns it or others can write it (exit 2).
Requests are paced to the server's limit as learnt from its 429s (and Retry-After or RateLimit-*
headers): --concurrency is the most in flight, --rate the most started per second. A 429 means
nothing was created, so that row is asked again; a row whose answer was lost is never resent.
Exit codes: 0 every row filed (now or earlier), 1 server down or the record/--out not writable,
2 unusable file, journal or flags, an unsafe journal, lock or --out, or two of --from/--journal/--out are one file (nothing sent),
3 some rows invalid, rejected, held, uncertain or not sent, or the CSV breaks part-way after rows
were sent; one claim the record of claims holds already (or a similar one: --force), or another run
filing for the store, 4 log in needed, 1 also when the claim is not confirmed, 130 interrupted.`;
