import { isEmail } from 'class-validator';

export interface Mailbox {
  name?: string;
  address: string;
}

/**
 * Parses `a@b.example` or `Display Name <a@b.example>`. Anything with a line break or control character,
 * or whose address is not an email address, is refused: such values end up in mail headers.
 */
export function parseMailbox(text: string): Mailbox | undefined {
  if (/[\u0000-\u001f\u007f]/.test(text)) {
    return undefined;
  }
  const angle = /^\s*(?:"?([^"<>]*?)"?\s*)?<([^<>\s]+)>\s*$/.exec(text);
  const [name, address] = angle ? [angle[1]?.trim() || undefined, angle[2]] : [undefined, text.trim()];
  return isEmail(address, { require_tld: false }) ? { name, address } : undefined;
}
