import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import busboy from 'busboy';
import type { Request } from 'express';
import yauzl from 'yauzl';
import { AppError } from '../common/app-error.js';

/** One report of an upload: its file name (a zip member's path) and its bytes, unpacked. */
export interface ReportSource {
  name: string;
  /** From a .zip: a member that is not a report is skipped with a warning rather than refused. */
  inArchive: boolean;
  chunks: AsyncIterable<Buffer>;
  /** Stops reading a source that is skipped. */
  skip(): void;
}

export interface UploadLimits {
  /** SVC_IMPORT_MAX_BYTES: the bytes received, and the bytes unpacked, each. */
  maxBytes: number;
  /** Members of one .zip. */
  maxEntries: number;
  /** Where a .zip is spooled (yauzl reads the central directory at the end of the file). */
  spoolDir: string;
}

export const MAX_ZIP_ENTRIES = 10_000;
/** Files in one multipart upload. */
const MAX_PARTS = 1_000;

const GZIP_MAGIC = [0x1f, 0x8b];
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const EMPTY_ZIP_MAGIC = [0x50, 0x4b, 0x05, 0x06];

/** The Content-Types a raw (not multipart) upload may have. */
export const RAW_TYPES = [
  'application/xml',
  'text/xml',
  'application/json',
  'application/octet-stream',
  'application/zip',
  'application/x-zip-compressed',
  'application/gzip',
  'application/x-gzip',
];

function tooLarge(what: string, limits: UploadLimits): AppError {
  return AppError.payloadTooLarge(
    `The ${what} exceed the import limit of ${limits.maxBytes} bytes (SVC_IMPORT_MAX_BYTES)`,
  );
}

/**
 * Passes `source` on, adding its bytes to `counted`, and fails with 413 once `counted` is past the limit: one
 * counter for what is received, one shared by every report unpacked from an upload (a .gz bomb is cut off).
 */
async function* withinLimit(
  source: AsyncIterable<Buffer>,
  counted: { bytes: number; what: string },
  limits: UploadLimits,
): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    counted.bytes += chunk.length;
    if (counted.bytes > limits.maxBytes) {
      throw tooLarge(counted.what, limits);
    }
    yield chunk;
  }
}

/** The first `n` bytes (fewer when the source is shorter) and the whole source again, those bytes included. */
export async function peek(
  source: AsyncIterable<Buffer>,
  n: number,
): Promise<{ head: Buffer; all: AsyncIterable<Buffer> }> {
  const iterator = source[Symbol.asyncIterator]();
  const taken: Buffer[] = [];
  let length = 0;
  let done = false;
  while (length < n) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    taken.push(next.value);
    length += next.value.length;
  }
  async function* all(): AsyncGenerator<Buffer> {
    yield* taken;
    if (!done) {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        yield next.value;
      }
    }
  }
  return { head: Buffer.concat(taken), all: all() };
}

const startsWith = (head: Buffer, magic: number[]) => magic.every((byte, i) => head[i] === byte);

/**
 * The reports of an upload request, in order, each read as it is consumed (nothing is buffered whole): the
 * `file` parts of a multipart/form-data body, or the raw body. A .gz is inflated on the fly; a .zip is spooled to
 * a temporary file under SVC_DATA_DIR (removed afterwards, whatever happens) and its members are checked before
 * any is extracted: at most 10,000, no absolute paths, `..` segments or symbolic links, their declared sizes
 * within the limit. What is received and what is unpacked are each bounded by SVC_IMPORT_MAX_BYTES (413).
 * A consumer must read or skip each source before asking for the next.
 */
export async function* reportSources(req: Request, limits: UploadLimits): AsyncGenerator<ReportSource> {
  const received = withinLimit(req, { bytes: 0, what: 'bytes received' }, limits);
  const unpacked = { bytes: 0, what: 'bytes unpacked' };
  if (req.is('multipart/form-data')) {
    for await (const part of multipartFiles(req, received)) {
      yield* unpack(part.name, part.chunks, limits, unpacked);
    }
  } else {
    yield* unpack(uploadName(req.headers['content-disposition']), received, limits, unpacked);
  }
}

/**
 * The file name a raw upload gives in Content-Disposition, else "report": `filename*` (RFC 5987: UTF-8 or ISO-8859-1,
 * percent-encoded) before `filename` (percent-decoded too, as clients send it). A broken encoding is the client's
 * mistake and is refused with 400 naming it, rather than guessed at.
 */
export function uploadName(disposition: string | undefined): string {
  if (!disposition) {
    return 'report';
  }
  const extended = /(?:^|;)\s*filename\*\s*=\s*([^';]*)'[^';]*'([^;\s]*)/i.exec(disposition);
  const plain = /(?:^|;)\s*filename\s*=\s*(?:"([^"]*)"?|([^;\s]*))/i.exec(disposition);
  let name: string | undefined;
  if (extended) {
    const charset = extended[1].trim().toLowerCase();
    if (charset !== 'utf-8' && charset !== 'iso-8859-1') {
      throw AppError.validation(
        `The file name in Content-Disposition is in charset ${JSON.stringify(extended[1].slice(0, 40))}; ` +
          'filename* must be UTF-8 or ISO-8859-1',
      );
    }
    name = percentDecoded(extended[2], charset === 'utf-8' ? 'utf8' : 'latin1');
  } else if (plain) {
    name = percentDecoded(plain[1] ?? plain[2], 'utf8');
  }
  // NULs and other controls would only garble the run's name.
  // eslint-disable-next-line no-control-regex
  name = name?.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return name ? name.slice(0, 200) : 'report';
}

/**
 * `value` with its %XX escapes decoded as bytes in `encoding`; 400 for a broken escape or, with escapes, invalid
 * UTF-8. Node hands header values over byte by byte (as Latin-1), so a name sent as raw UTF-8 is decoded here too.
 */
function percentDecoded(value: string, encoding: 'utf8' | 'latin1'): string {
  const escaped = value.includes('%');
  // eslint-disable-next-line no-control-regex
  if (encoding === 'latin1' ? !escaped : /^[\u0000-\u007f]*$/.test(value) && !escaped) {
    return value;
  }
  const bytes = new Uint8Array(value.length);
  let length = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x25) {
      const hex = value.slice(i + 1, i + 3);
      if (!/^[0-9a-f]{2}$/i.test(hex)) {
        throw brokenName(value);
      }
      bytes[length++] = parseInt(hex, 16);
      i += 2;
    } else {
      bytes[length++] = c & 0xff;
    }
  }
  const decoded = bytes.subarray(0, length);
  if (encoding === 'latin1') {
    return Buffer.from(decoded).toString('latin1');
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(decoded);
  } catch {
    if (!escaped) {
      return value; // raw bytes of another charset: kept as they came, as before
    }
    throw brokenName(value);
  }
}

function brokenName(value: string): AppError {
  return AppError.validation(
    `The file name in Content-Disposition (${JSON.stringify(value.slice(0, 100))}) has a broken ` +
      'percent-encoding: each % must start a %XX escape, and the bytes must be UTF-8',
  );
}

async function* unpack(
  name: string,
  source: AsyncIterable<Buffer>,
  limits: UploadLimits,
  unpacked: { bytes: number; what: string },
): AsyncGenerator<ReportSource> {
  const { head, all } = await peek(source, 4);
  if (startsWith(head, GZIP_MAGIC)) {
    const gunzip = createGunzip();
    const inflating = pipeline(Readable.from(all), gunzip).catch((error: unknown) =>
      gunzip.destroy(asBadArchive(error, 'gzip')),
    );
    yield {
      name: name.replace(/\.gz$/i, ''),
      inArchive: false,
      chunks: withinLimit(gunzip, unpacked, limits),
      skip: () => gunzip.destroy(),
    };
    await inflating;
  } else if (startsWith(head, ZIP_MAGIC) || startsWith(head, EMPTY_ZIP_MAGIC)) {
    yield* zipMembers(all, limits, unpacked);
  } else {
    yield { name, inArchive: false, chunks: withinLimit(all, unpacked, limits), skip: () => undefined };
  }
}

function asBadArchive(error: unknown, kind: string): Error {
  if (error instanceof AppError) {
    return error;
  }
  return AppError.validation(`The ${kind} archive is not valid: ${(error as Error).message}`);
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/** Why a member's name or kind is refused, or undefined. */
function unsafeMember(entry: yauzl.Entry): string | undefined {
  const name = entry.fileName;
  if (name.startsWith('/') || name.startsWith('\\') || /^[a-z]:/i.test(name)) {
    return `an absolute path (${name.slice(0, 100)})`;
  }
  if (name.split(/[\\/]/).includes('..')) {
    return `a path with a .. segment (${name.slice(0, 100)})`;
  }
  if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) {
    return `a symbolic link (${name.slice(0, 100)})`;
  }
  return undefined;
}

async function* zipMembers(
  source: AsyncIterable<Buffer>,
  limits: UploadLimits,
  unpacked: { bytes: number; what: string },
): AsyncGenerator<ReportSource> {
  await mkdir(limits.spoolDir, { recursive: true });
  const path = join(limits.spoolDir, `upload-${randomBytes(8).toString('hex')}.zip`);
  let zip: yauzl.ZipFile | undefined;
  try {
    await pipeline(Readable.from(source), createWriteStream(path, { mode: 0o600 }));
    // decodeStrings: false, so that yauzl's own name checks (which fail the whole archive with an error that names
    // nothing) leave the names to unsafeMember's, which say which member and why.
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.open(
        path,
        { lazyEntries: true, validateEntrySizes: true, autoClose: false, decodeStrings: false },
        (error, opened) => (error ? reject(asBadArchive(error, 'zip')) : resolve(opened)),
      ),
    );
    if (zip.entryCount > limits.maxEntries) {
      throw AppError.validation(
        `The zip archive holds ${zip.entryCount} entries; at most ${limits.maxEntries} are accepted`,
      );
    }
    const entries = await readEntries(zip);
    let declared = 0;
    for (const entry of entries) {
      const problem = unsafeMember(entry);
      if (problem) {
        throw AppError.validation(`The zip archive holds ${problem}; nothing was imported`);
      }
      declared += entry.uncompressedSize;
    }
    if (declared > limits.maxBytes) {
      throw tooLarge('zip members', limits);
    }
    for (const entry of entries) {
      if (entry.fileName.endsWith('/')) {
        continue;
      }
      const stream = await new Promise<Readable>((resolve, reject) =>
        zip!.openReadStream(entry, (error, opened) =>
          error ? reject(asBadArchive(error, 'zip')) : resolve(opened),
        ),
      );
      // Read or skipped, a member's stream may still fail (its data shorter or longer than declared): handled.
      stream.on('error', () => undefined);
      yield {
        name: entry.fileName,
        inArchive: true,
        chunks: withinLimit(memberChunks(stream, entry), unpacked, limits),
        skip: () => stream.destroy(),
      };
      stream.destroy();
    }
  } finally {
    zip?.close();
    await rm(path, { force: true });
  }
}

/**
 * A member's bytes, its failures said as the client's: data that inflates past the size the archive declares for
 * it is 413 (the declared sizes are what the limit was checked against), any other damage 400.
 */
async function* memberChunks(stream: Readable, entry: yauzl.Entry): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      yield chunk;
    }
  } catch (error) {
    if (error instanceof AppError) {
      throw error;
    }
    const name = JSON.stringify(entry.fileName.slice(0, 100));
    const message = (error as Error).message;
    if (/too many bytes/.test(message)) {
      throw AppError.payloadTooLarge(
        `The zip member ${name} inflates to more than its declared size of ${entry.uncompressedSize} bytes: ` +
          'the archive is not valid',
      );
    }
    if (/not enough bytes/.test(message)) {
      throw AppError.validation(
        `The zip member ${name} inflates to less than its declared size of ${entry.uncompressedSize} bytes: ` +
          'the archive is not valid',
      );
    }
    throw AppError.validation(`The zip member ${name} cannot be unpacked: ${message}`);
  }
}

/** The central directory's entries (at most maxEntries, checked before), names decoded. */
function readEntries(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    zip.on('entry', (entry: yauzl.Entry) => {
      const raw = entry.fileName as unknown as Buffer | string;
      // General purpose bit 11: the name is UTF-8; else CP437, whose printable ASCII part is what report names use.
      entry.fileName =
        typeof raw === 'string' ? raw : raw.toString(entry.generalPurposeBitFlag & 0x800 ? 'utf8' : 'latin1');
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', (error: Error) => reject(asBadArchive(error, 'zip')));
    zip.readEntry();
  });
}

/**
 * The `file` parts of a multipart body, one at a time: busboy emits the next part only once the current one has
 * been read (or skipped), so a consumer that reads each before asking for the next holds one part's chunk at a
 * time. Other fields are ignored; parts under another name than `file` are skipped.
 */
async function* multipartFiles(
  req: Request,
  body: AsyncIterable<Buffer>,
): AsyncGenerator<{ name: string; chunks: AsyncIterable<Buffer> }> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      // Browsers (and curl, supertest) send a part's file name as raw UTF-8; busboy's default reads it as Latin-1
      // and "nightly.xml" in another script came out as mojibake in the run's name.
      defParamCharset: 'utf8',
      limits: { files: MAX_PARTS, fields: 100, fieldSize: 64 * 1024 },
    });
  } catch (error) {
    throw AppError.validation(`The multipart body cannot be read: ${(error as Error).message}`);
  }
  const parts: { name: string; stream: Readable }[] = [];
  let finished = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  parser.on('file', (field, stream, info) => {
    // busboy fails a part's stream when the body breaks off; a part skipped, queued or already read has nobody
    // reading it, and an 'error' event without a listener would take the process down. A reader sees the failure
    // through partChunks.
    stream.on('error', () => undefined);
    if (field !== 'file') {
      stream.resume();
      return;
    }
    // busboy decodes a part's name leniently: a byte that is not UTF-8 comes out as U+FFFD. Refused as a raw
    // upload's broken name is (uploadName), rather than kept as "��.xml" in the run's name.
    if (info.filename?.includes('\uFFFD')) {
      stream.resume();
      failure ??= AppError.validation(
        "A part's file name is not valid UTF-8 (or its percent-encoding is not): send the name as UTF-8",
      );
      notify();
      return;
    }
    parts.push({ name: info.filename ?? 'report', stream });
    notify();
  });
  parser.on('close', () => {
    finished = true;
    notify();
  });
  parser.on('error', (error: Error) => {
    failure = multipartError(error);
    notify();
  });
  parser.on('filesLimit', () => {
    failure = AppError.validation(`At most ${MAX_PARTS} files can be imported at once`);
    notify();
  });
  const feeding = pipeline(Readable.from(body), parser).catch((error: unknown) => {
    failure ??=
      error instanceof AppError || /Unexpected end of/.test((error as Error).message)
        ? multipartError(error)
        : AppError.validation(`The upload was not received whole: ${(error as Error).message}`);
    notify();
  });
  let any = false;
  for (;;) {
    if (failure) {
      throw failure;
    }
    const part = parts.shift();
    if (part) {
      any = true;
      yield { name: part.name, chunks: partChunks(part.stream) };
      part.stream.resume();
      continue;
    }
    if (finished) {
      break;
    }
    await new Promise<void>((resolve) => (wake = resolve));
  }
  await feeding;
  // Set by the parser's callbacks meanwhile (which the compiler cannot see).
  const late = failure as Error | undefined;
  if (late) {
    throw late;
  }
  if (!any) {
    throw AppError.validation('The multipart body holds no part named "file"');
  }
}

/** A part's bytes; a failure of the body while it is read (cut short, not multipart after all) is the client's. */
async function* partChunks(stream: Readable): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      yield chunk;
    }
  } catch (error) {
    throw multipartError(error);
  }
}

/** busboy's errors as the API answers them: 400 saying what is wrong with the body (a limit's 413 kept). */
function multipartError(error: unknown): AppError {
  if (error instanceof AppError) {
    return error;
  }
  const message = (error as Error).message;
  if (/Unexpected end of (form|file)/i.test(message)) {
    return AppError.validation(
      'The multipart body ends before its closing boundary: the upload was cut short, nothing was imported',
    );
  }
  return AppError.validation(`The multipart body cannot be read: ${message}`);
}
