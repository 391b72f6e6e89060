import { isEmail } from 'class-validator';
import { NO_CONTROL_CHARS } from '../common/text.js';

export interface Mailbox {
  name?: string;
  address: string;
}

/**
 * Parses `a@b.example` or `Display Name <a@b.example>`. Anything with a line break or control character,
 * or whose address is not an email address, is refused: such values end up in mail headers.
 */
export function parseMailbox(text: string): Mailbox | undefined {
  if (!NO_CONTROL_CHARS.test(text)) {
    return undefined;
  }
  const angle = /^\s*(?:"?([^"<>]*?)"?\s*)?<([^<>\s]+)>\s*$/.exec(text);
  const [name, address] = angle ? [angle[1]?.trim() || undefined, angle[2]] : [undefined, text.trim()];
  return isEmail(address, { require_tld: false }) ? { name, address } : undefined;
}
