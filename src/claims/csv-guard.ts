/**
 * The CSV text on its way to the parser (csv-parse): records over the limits of a claims file
 * refused the moment they get there, the header's raw text kept (for byte positions in messages),
 * CRLF turned into LF. And the error for a CSV that breaks at a line.
 */
import { Transform } from 'node:stream';
import { UsageError } from '../core/errors.js';
import { count } from '../text/count.js';
import { CSV_LIMITS } from './row-source.js';

/** Where the header (the first non-empty record) is, and its raw text, for the positions of its cells. */
export interface HeaderText {
  text: string;
  line: number;
  byte: number;
}

/**
 * Watches the CSV text on its way to the parser: refuses a record over `CSV_LIMITS` the moment it
 * gets there, keeps the header's raw text, and turns CRLF into LF (csv-parse miscounts lines when
 * a quoted cell holds a CRLF, and the line numbers are what users look up; a CRLF inside a quoted
 * cell becomes a plain newline). Quotes toggle the quoted state, which `""` inside a quoted cell
 * leaves as it was, so commas and newlines in cells are not counted.
 */
export class CsvGuard extends Transform {
  /** Set when a record broke a limit: the text before that record was passed on, nothing after. */
  failure: CsvReadError | undefined;
  header: HeaderText | undefined;
  private carry = '';
  private line = 1;
  private bytes = 0;
  private quoted = false;
  private recordLine = 1;
  private recordChars = 0;
  private columns = 1;
  // The header's text while it is read, and where its record began.
  private headerText = '';
  private headerByte = 0;

  constructor(private readonly label: string) {
    super({ decodeStrings: false });
  }

  override _transform(chunk: Buffer | string, _enc: BufferEncoding, done: (error?: Error | null, data?: string) => void): void {
    if (this.failure) {
      done();
      return;
    }
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    const { recordChars: maxChars, columns: maxColumns } = CSV_LIMITS;
    let recordStart = 0;
    let headerFrom = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) {
        this.line++;
        if (!this.quoted) {
          if (!this.header) {
            this.headerText += text.slice(headerFrom, i);
            headerFrom = i + 1;
            if (this.recordChars > 0) this.header = { text: this.headerText, line: this.recordLine, byte: this.headerByte };
            else {
              this.headerText = '';
              this.headerByte = this.bytes + Buffer.byteLength(text.slice(0, i + 1));
            }
          }
          this.recordLine = this.line;
          this.recordChars = 0;
          this.columns = 1;
          recordStart = i + 1;
          continue;
        }
      } else if (c === 34) this.quoted = !this.quoted;
      else if (c === 44 && !this.quoted && ++this.columns > maxColumns) {
        this.fail(text, recordStart, i, 'columns', done);
        return;
      }
      // A CR before LF is not part of the record (an empty CRLF line stays empty).
      if (c !== 13 && ++this.recordChars > maxChars) {
        this.fail(text, recordStart, i, 'chars', done);
        return;
      }
    }
    if (!this.header) this.headerText += text.slice(headerFrom);
    this.bytes += Buffer.byteLength(text);
    done(null, this.crlf(text));
  }

  override _flush(done: (error?: Error | null, data?: string) => void): void {
    done(null, this.failure ? '' : this.carry);
  }

  /** CRLF to LF, with a CR at the end of a chunk held until the next one shows what follows it. */
  private crlf(chunk: string): string {
    let text = this.carry + chunk;
    this.carry = '';
    if (text.endsWith('\r')) {
      this.carry = '\r';
      text = text.slice(0, -1);
    }
    return text.replace(/\r\n/g, '\n');
  }

  /** Passes on the records before the one that broke a limit, and keeps the error for the reader. */
  private fail(text: string, recordStart: number, at: number, what: 'chars' | 'columns', done: (error?: Error | null, data?: string) => void): void {
    const byte = this.bytes + Buffer.byteLength(text.slice(0, at));
    const header = !this.header;
    const where = `line ${count(this.line)}, column ${count(this.columns)}, byte ${count(byte)}`;
    const record = header ? 'the header' : 'the row';
    const message =
      what === 'chars'
        ? `${this.label} line ${count(this.recordLine)}: ${record} is longer than ${count(CSV_LIMITS.recordChars)} characters, the limit for one row of a claims file (reached at ${where}).`
        : `${this.label} line ${count(this.recordLine)}: ${record} has more than ${count(CSV_LIMITS.columns)} ${header ? 'columns' : 'cells'}, the limit for a claims file (column ${count(this.columns)} starts at line ${count(this.line)}, byte ${count(byte + 1)}).`;
    const hint = header
      ? 'The header names the columns, one claim field each (`opcli claims template --csv` prints them): check that this is the claims file and that its lines end with newlines. Nothing was sent.'
      : 'A row holds one claim: check the file around that line (an unclosed quote runs on to the end of the file). Rows before it were read; fix it and run the same command again: rows already filed are skipped.';
    this.failure = new CsvReadError(message, this.recordLine, hint);
    done(null, this.crlf(text.slice(0, recordStart)));
  }
}

/** The 0-based character index where each cell of a raw CSV record begins. */
function cellStarts(text: string): number[] {
  const starts = [0];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) quoted = !quoted;
    else if (c === 44 && !quoted) starts.push(i + 1);
  }
  return starts;
}

/** "column 3, byte 57" for a cell of the header (1-based column), or just the column when the header's text is unknown. */
export function headerCellAt(header: HeaderText | undefined, column: number): string {
  if (!header) return `column ${count(column)}`;
  const bom = header.text.startsWith('\ufeff') ? 1 : 0;
  const start = cellStarts(header.text.slice(bom))[column - 1];
  if (start === undefined) return `column ${count(column)}`;
  return `column ${count(column)}, byte ${count(header.byte + Buffer.byteLength(header.text.slice(0, bom + start)))}`;
}

/** The CSV breaks at `line`: rows before it were read, nothing from it on. */
export class CsvReadError extends UsageError {
  constructor(
    message: string,
    readonly line: number | undefined,
    hint = 'Fix the file (an unclosed quote is the usual cause) and run the same command again; rows already filed are skipped.',
  ) {
    super(message, hint);
  }
}
