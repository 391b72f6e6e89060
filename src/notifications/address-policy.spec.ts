import { checkTarget, refusedBecause, RefusedAddressError, UnresolvedHostError } from './address-policy.js';

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
    ['2002:7f00:1::1', /loopback address \(127\.0\.0\.1, written as IPv6\)/],
    ['2002:a9fe:a9fe::', /metadata/],
    ['2002:c0a8:101:1::5', /RFC 1918/],
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
    '2002:808:808::1',
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

  it('tells a host that does not resolve, or not within the limit, from a refused one', async () => {
    const none = checkTarget('http://hooks.example.test/x', false, {
      lookup: () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })),
    });
    await expect(none).rejects.toThrow(UnresolvedHostError);
    await expect(none).rejects.toThrow(/hooks\.example\.test does not resolve/);
    const empty = checkTarget('http://hooks.example.test/x', false, { lookup: () => Promise.resolve([]) });
    await expect(empty).rejects.toThrow(UnresolvedHostError);
    // A resolver that never answers: refused after the limit, not waited for.
    const started = Date.now();
    const hung = checkTarget('http://hooks.example.test/x', false, {
      lookup: () => new Promise(() => undefined),
      limitMs: 50,
    });
    await expect(hung).rejects.toThrow(/did not resolve within 0\.05 s/);
    expect(Date.now() - started).toBeLessThan(5_000);
    // An unresolved host is refused where a webhook is made (the subclass), a private one is not "unresolved".
    await expect(hung).rejects.toBeInstanceOf(RefusedAddressError);
    const local = checkTarget('http://hooks.example.test/x', false, {
      lookup: () => Promise.resolve([{ address: '10.0.0.7', family: 4 }]),
    });
    await expect(local).rejects.toThrow(/resolves to 10\.0\.0\.7, which is a private address/);
    await expect(local).rejects.not.toBeInstanceOf(UnresolvedHostError);
  });
});
