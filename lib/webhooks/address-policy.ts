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
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv6');
}
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** An IPv4 address carried inside IPv6 (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d), else null. */
function embeddedIpv4(address: string): string | null {
  const m = /^(?:::ffff:|64:ff9b::)((?:\d{1,3}\.){3}\d{1,3})$/i.exec(address);
  if (m) return m[1]!;
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return null;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export type AddressVerdict = 'allowed' | 'loopback' | 'forbidden';

export function classifyAddress(address: string): AddressVerdict {
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
