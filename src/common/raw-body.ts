/** What the JSON body parser keeps of a request body besides the parsed value (see app.factory's bodyReader). */
export interface RawBodyRequest {
  /** The bytes received (after any Content-Encoding was undone). */
  rawBody?: Buffer;
  /** The charset they were decoded with: utf-8 unless the Content-Type named another. */
  rawBodyCharset?: string;
}

/**
 * The body as the JSON text the parser read, when that text is the bytes as received: UTF-8, less a byte-order
 * mark (which the parser skipped too). Undefined for another charset (UTF-16, say) or when nothing was kept.
 */
export function utf8BodyText(req: RawBodyRequest): string | undefined {
  if (!req.rawBody || req.rawBodyCharset !== 'utf-8') {
    return undefined;
  }
  const text = req.rawBody.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
