import { TextDecoder } from 'node:util';

/** Bytes a stream should gather before calling {@link decoderFor}: enough for a BOM and an XML declaration. */
export const DECODER_HEAD_BYTES = 512;

const DECLARED_ENCODING = /^\s*<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/;

/**
 * The decoder for a report from its first bytes: a BOM (UTF-8, UTF-16 LE/BE), UTF-16 without one (`<` next to a
 * zero byte), else the XML declaration's encoding (ISO-8859-1, windows-1252 ...), else UTF-8. The decoder drops
 * the BOM, and replaces bytes invalid in the encoding with U+FFFD rather than failing the import.
 */
export function decoderFor(head: Uint8Array): { decoder: TextDecoder; warning?: string } {
  if (head.length >= 2) {
    const [a, b] = head;
    if (a === 0xff && b === 0xfe) {
      return { decoder: new TextDecoder('utf-16le') };
    }
    if (a === 0xfe && b === 0xff) {
      return { decoder: new TextDecoder('utf-16be') };
    }
    if (a === 0x3c && b === 0x00) {
      return { decoder: new TextDecoder('utf-16le') };
    }
    if (a === 0x00 && b === 0x3c) {
      return { decoder: new TextDecoder('utf-16be') };
    }
  }
  const start = head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  const declared = DECLARED_ENCODING.exec(
    Buffer.from(head.buffer, head.byteOffset, head.length).toString('latin1', start),
  );
  const label = declared?.[1].toLowerCase();
  // The declaration was readable byte by byte, so a declared UTF-16/32 is wrong about the bytes: take UTF-8.
  if (
    start === 0 &&
    label !== undefined &&
    label !== 'utf-8' &&
    label !== 'utf8' &&
    !/^(utf-?(16|32)|ucs-?[24])/.test(label)
  ) {
    try {
      return { decoder: new TextDecoder(label) };
    } catch {
      return {
        decoder: new TextDecoder('utf-8'),
        warning: `The declared encoding ${JSON.stringify(declared![1])} is not supported; the report was read as UTF-8`,
      };
    }
  }
  return { decoder: new TextDecoder('utf-8') };
}

/** Bytes to text, chunk by chunk, with the decoder chosen from the first {@link DECODER_HEAD_BYTES}. */
export class StreamDecoder {
  /** Set once decoding started, if the declared encoding could not be used. */
  warning: string | undefined;
  private decoder: TextDecoder | undefined;
  private pending: Uint8Array[] = [];
  private pendingLength = 0;

  /** The text of `chunk`; empty while the head is still being gathered, or when a character is split. */
  write(chunk: Uint8Array): string {
    if (this.decoder !== undefined) {
      return this.decoder.decode(chunk, { stream: true });
    }
    this.pending.push(chunk);
    this.pendingLength += chunk.length;
    return this.pendingLength < DECODER_HEAD_BYTES ? '' : this.start();
  }

  /** The rest of the text (a partial character at the end becomes U+FFFD). */
  end(): string {
    if (this.decoder === undefined) {
      if (this.pendingLength === 0) {
        return '';
      }
      const text = this.start();
      return text + this.decoder!.decode();
    }
    return this.decoder.decode();
  }

  private start(): string {
    const head = Buffer.concat(this.pending);
    this.pending = [];
    const { decoder, warning } = decoderFor(head);
    this.decoder = decoder;
    this.warning = warning;
    return decoder.decode(head, { stream: true });
  }
}
