import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may not point (SSRF): loopback, RFC 1918, CGNAT, link-local (the cloud metadata address
 * 169.254.169.254 among them), unspecified, multicast and reserved IPv4; loopback, unspecified, ULA (fc00::/7),
 * link-local (fe80::/10) and multicast IPv6; and any IPv6 form that carries one of those IPv4 addresses
 * (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96).
 */
const V4_REFUSED: [string, number, string][] = [
  ['0.0.0.0', 8, 'an unspecified address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['10.0.0.0', 8, 'a private address (RFC 1918)'],
  ['172.16.0.0', 12, 'a private address (RFC 1918)'],
  ['192.168.0.0', 16, 'a private address (RFC 1918)'],
  ['100.64.0.0', 10, 'a shared (CGNAT) address'],
  ['169.254.0.0', 16, 'a link-local address'],
  ['192.0.0.0', 24, 'a reserved address'],
  ['198.18.0.0', 15, 'a reserved address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
];
const V6_REFUSED: [string, number, string][] = [
  ['::', 128, 'an unspecified address'],
  ['::1', 128, 'a loopback address'],
  ['fc00::', 7, 'a private address (IPv6 ULA)'],
  ['fe80::', 10, 'a link-local address'],
  ['ff00::', 8, 'a multicast address'],
];

const lists: { list: BlockList; family: 'ipv4' | 'ipv6'; why: string }[] = [
  ...V4_REFUSED.map(([net, prefix, why]) => ({ net, prefix, why, family: 'ipv4' as const })),
  ...V6_REFUSED.map(([net, prefix, why]) => ({ net, prefix, why, family: 'ipv6' as const })),
].map(({ net, prefix, why, family }) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return { list, family, why };
});

/** Why `address` (an IP literal) is refused, or undefined when a webhook may reach it. */
export function refusedBecause(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) {
    return 'not an IP address';
  }
  if (address === '169.254.169.254') {
    return 'the cloud metadata address';
  }
  if (family === 6) {
    const embedded = embeddedIpv4(address);
    if (embedded) {
      const why = refusedBecause(embedded);
      return why ? `${why} (${embedded}, written as IPv6)` : undefined;
    }
  }
  const kind = family === 4 ? 'ipv4' : 'ipv6';
  return lists.find((l) => l.family === kind && l.list.check(address, kind))?.why;
}

/** The IPv4 address an IPv6 address carries (mapped, compatible or NAT64), if it is such a form. */
function embeddedIpv4(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  if (!bytes) {
    return undefined;
  }
  const zero = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  const mapped = zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff;
  const compatible = zero(0, 12) && !zero(12, 16) && !(zero(12, 15) && bytes[15] === 1);
  const nat64 = bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(4, 12);
  return mapped || compatible || nat64 ? Array.from(bytes.subarray(12, 16)).join('.') : undefined;
}

function ipv6Bytes(address: string): Buffer | undefined {
  let text = address.split('%')[0];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const parts = v4[1].split('.').map(Number);
    text = `${text.slice(0, -v4[1].length)}${((parts[0] << 8) | parts[1]).toString(16)}:${((parts[2] << 8) | parts[3]).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const left = groups(head);
  const right = groups(tail);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) {
    return undefined;
  }
  const all = [...left, ...Array<string>(missing).fill('0'), ...right];
  const bytes = Buffer.alloc(16);
  all.forEach((g, i) => bytes.writeUInt16BE(parseInt(g || '0', 16), i * 2));
  return bytes;
}

export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
}

export interface CheckedTarget {
  url: URL;
  /** The address the connection goes to: the one checked (no second resolution, so no DNS rebinding). */
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a webhook URL's host and checks every address it resolves to; throws RefusedAddressError naming the
 * reason (a scheme other than http/https, a host that does not resolve, a refused address) unless `allowPrivate`.
 */
export async function checkTarget(rawUrl: string, allowPrivate: boolean): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new RefusedAddressError('url must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RefusedAddressError(`url must use http or https, not ${url.protocol.replace(/:$/, '')}`);
  }
  if (url.username || url.password) {
    throw new RefusedAddressError('url must not carry a user name or password');
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: { address: string; family: number }[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw new RefusedAddressError(`url's host ${host} does not resolve`);
    }
  }
  if (!addresses.length) {
    throw new RefusedAddressError(`url's host ${host} does not resolve`);
  }
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const why = refusedBecause(address);
      if (why) {
        throw new RefusedAddressError(
          `url's host ${host}${host === address ? '' : ` resolves to ${address}, which`} is ${why}; webhooks may not reach it`,
        );
      }
    }
  }
  const [first] = addresses;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
