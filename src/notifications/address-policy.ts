import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may not point (SSRF): loopback, RFC 1918, CGNAT, link-local (the cloud metadata address
 * 169.254.169.254 among them), unspecified, multicast and reserved IPv4; loopback, unspecified, ULA (fc00::/7),
 * link-local (fe80::/10) and multicast IPv6; and any IPv6 form that carries one of those IPv4 addresses
 * (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002:aabb:ccdd::/48).
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

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64 or 6to4), if it is such a form. */
function embeddedIpv4(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  if (!bytes) {
    return undefined;
  }
  const zero = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  const mapped = zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff;
  const compatible = zero(0, 12) && !zero(12, 16) && !(zero(12, 15) && bytes[15] === 1);
  const nat64 = bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(4, 12);
  if (mapped || compatible || nat64) {
    return Array.from(bytes.subarray(12, 16)).join('.');
  }
  // 6to4: the IPv4 address of the relay's site follows the 2002::/16 prefix.
  return bytes[0] === 0x20 && bytes[1] === 0x02 ? Array.from(bytes.subarray(2, 6)).join('.') : undefined;
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

/**
 * The URL's host did not resolve (no such name, or no answer within the time allowed): refused where a webhook is
 * created or changed, but at send time a failed attempt to retry (a resolver's outage passes), not a refusal.
 */
export class UnresolvedHostError extends RefusedAddressError {
  override name = 'UnresolvedHostError';
}

/** How long a webhook's host may take to resolve: a part of the sender's lease (webhook-sender.service.ts). */
export const LOOKUP_LIMIT_MS = 5_000;

export type LookupAll = (host: string) => Promise<{ address: string; family: number }[]>;

const lookupAll: LookupAll = (host) => dnsLookup(host, { all: true, verbatim: true });

export interface CheckedTarget {
  url: URL;
  /** The address the connection goes to: the one checked (no second resolution, so no DNS rebinding). */
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a webhook URL's host (within `limitMs`) and checks every address it resolves to; throws
 * RefusedAddressError naming the reason (a scheme other than http/https, a refused address) unless `allowPrivate`,
 * or UnresolvedHostError (a host that does not resolve, or not in time).
 */
export async function checkTarget(
  rawUrl: string,
  allowPrivate: boolean,
  { lookup = lookupAll, limitMs = LOOKUP_LIMIT_MS }: { lookup?: LookupAll; limitMs?: number } = {},
): Promise<CheckedTarget> {
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
  const addresses = isIP(host)
    ? [{ address: host, family: isIP(host) }]
    : await resolveWithin(lookup, host, limitMs);
  if (!addresses.length) {
    throw new UnresolvedHostError(`url's host ${host} does not resolve`);
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

/** The host's addresses, or UnresolvedHostError when it has none or none came within `limitMs`. */
async function resolveWithin(
  lookup: LookupAll,
  host: string,
  limitMs: number,
): Promise<{ address: string; family: number }[]> {
  let timer: NodeJS.Timeout | undefined;
  // A lookup cannot be cancelled: one that answers late is let go.
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new UnresolvedHostError(`url's host ${host} did not resolve within ${limitMs / 1000} s`)),
      limitMs,
    );
  });
  try {
    return await Promise.race([
      lookup(host).catch(() => {
        throw new UnresolvedHostError(`url's host ${host} does not resolve`);
      }),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
