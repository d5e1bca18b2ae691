import { BlockList, isIP } from 'node:net';

/**
 * SSRF guard: which resolved addresses a webhook may connect to. Only public unicast addresses;
 * loopback only when the local runtime allows it. Private, link-local (and with it the cloud
 * metadata service 169.254.169.254 / fd00:ec2::254), CGNAT, multicast, documentation and reserved
 * ranges are always refused. node's BlockList does the matching, so no address parsing is ours.
 */
const forbidden = new BlockList();
const loopback = new BlockList();

for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv6');
}
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * The eight 16-bit groups of an address `isIP` accepted as IPv6, without a zone id (a trailing dotted
 * IPv4 part folded in). Only called after that check, so the text has at most one `::`, a dotted part
 * only at its end, and expands to eight groups in range: nothing here checks that again.
 */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::').map((part) => (part ? part.split(':') : []));
  // `::` stands for the groups missing from eight (none when there is no `::`).
  const fill = 8 - head!.length - (tail?.length ?? 0);
  return [...head!, ...Array<string>(fill).fill('0'), ...(tail ?? [])].map((g) => parseInt(g, 16));
}

/**
 * The IPv4 address an IPv6 address carries, when it is in one of the embedding ranges: IPv4-mapped
 * (::ffff:0:0/96), SIIT (::ffff:0:0:0/96), IPv4-compatible (::/96) and NAT64 (64:ff9b::/96).
 */
function embeddedIpv4(address: string): string | null {
  if (isIP(address) !== 6) return null;
  const g = ipv6Groups(address);
  const prefix = g.slice(0, 6).join(':');
  const embedding = ['0:0:0:0:0:65535', '0:0:0:0:65535:0', '0:0:0:0:0:0', '100:65435:0:0:0:0'];
  if (!embedding.includes(prefix)) return null;
  if (prefix === '0:0:0:0:0:0' && g[6] === 0 && g[7]! <= 1) return null; // :: and ::1 are IPv6's own
  return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
}

export type AddressVerdict = 'allowed' | 'loopback' | 'forbidden';

export function classifyAddress(withZone: string): AddressVerdict {
  // A zone id (`fe80::1%eth0`) says which interface, not which address; BlockList cannot parse some
  // addresses that carry one (libuv reads at most 39 characters before the `%`), so it is dropped first.
  const address = withZone.split('%')[0]!;
  const v4 = embeddedIpv4(address);
  if (v4) return classifyAddress(v4);
  const family = isIP(address);
  if (family === 0) return 'forbidden';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (loopback.check(address, type)) return 'loopback';
  return forbidden.check(address, type) ? 'forbidden' : 'allowed';
}

export function addressAllowed(address: string, opts: { allowLoopback: boolean }): boolean {
  const verdict = classifyAddress(address);
  return verdict === 'allowed' || (verdict === 'loopback' && opts.allowLoopback);
}
