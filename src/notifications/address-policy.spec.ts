import { checkTarget, refusedBecause } from './address-policy.js';

describe('Webhook address policy', () => {
  it.each([
    ['127.0.0.1', /loopback/],
    ['127.255.0.9', /loopback/],
    ['10.0.0.1', /RFC 1918/],
    ['172.16.5.4', /RFC 1918/],
    ['172.31.255.255', /RFC 1918/],
    ['192.168.1.1', /RFC 1918/],
    ['100.64.0.1', /CGNAT/],
    ['100.127.255.254', /CGNAT/],
    ['169.254.169.254', /metadata/],
    ['169.254.1.1', /link-local/],
    ['0.0.0.0', /unspecified/],
    ['224.0.0.1', /multicast/],
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['fc00::1', /ULA/],
    ['fdff:ffff::1', /ULA/],
    ['fe80::1', /link-local/],
    ['febf::1', /link-local/],
    ['::ffff:127.0.0.1', /loopback/],
    ['::ffff:7f00:1', /loopback/],
    ['::ffff:10.1.1.1', /RFC 1918/],
    ['::ffff:169.254.169.254', /metadata/],
    ['64:ff9b::a00:1', /RFC 1918/],
  ])('refuses %s', (address, why) => {
    expect(refusedBecause(address)).toMatch(why);
  });

  it.each([
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '203.0.113.10',
    '2001:db8::1',
    '::ffff:8.8.8.8',
    'fec0::1',
  ])('lets %s through', (address) => {
    expect(refusedBecause(address)).toBeUndefined();
  });

  it('refuses other schemes and credentials in the URL, and lets private addresses through only when allowed', async () => {
    await expect(checkTarget('file:///etc/passwd', false)).rejects.toThrow(/http or https/);
    await expect(checkTarget('gopher://8.8.8.8/', false)).rejects.toThrow(/http or https/);
    await expect(checkTarget('http://u:p@8.8.8.8/', false)).rejects.toThrow(/user name or password/);
    await expect(checkTarget('http://[::1]:9/x', false)).rejects.toThrow(/loopback/);
    await expect(checkTarget('http://localhost:9/x', false)).rejects.toThrow(
      /localhost resolves to .* loopback/,
    );
    await expect(checkTarget('http://127.0.0.1:9/x', true)).resolves.toMatchObject({
      address: '127.0.0.1',
      family: 4,
    });
    await expect(checkTarget('http://[::1]:9/x', true)).resolves.toMatchObject({ address: '::1', family: 6 });
  });
});
