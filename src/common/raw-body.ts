import { isUtf8 } from 'node:buffer';

/** What the JSON body parser keeps of a request body besides the parsed value (see app.factory's bodyReader). */
export interface RawBodyRequest {
  /** The bytes received (after any Content-Encoding was undone). */
  rawBody?: Buffer;
  /** The charset they were decoded with: utf-8 unless the Content-Type named another. */
  rawBodyCharset?: string;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The bytes of the JSON text the parser read, when they are that text as UTF-8: well-formed UTF-8 as received,
 * less a byte-order mark (which the parser skipped too); a view, not a copy. Undefined for another charset
 * (UTF-16, say), for bytes that are not UTF-8 (the parser read U+FFFD where they stood), or when nothing was kept.
 */
export function utf8Body(req: RawBodyRequest): Buffer | undefined {
  const raw = req.rawBody;
  if (!raw || req.rawBodyCharset !== 'utf-8' || !isUtf8(raw)) {
    return undefined;
  }
  return raw.subarray(0, 3).equals(BOM) ? raw.subarray(3) : raw;
}
