import { generate } from 'otplib';
import { Totp, TOTP_PERIOD_SECONDS } from './totp.js';

describe(Totp.name, () => {
  // RFC 6238, appendix B: the SHA-1 seed "12345678901234567890" in base32.
  const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
  let nowMs: number;
  const totp = new Totp({ now: () => nowMs });
  const codeAt = (secret: string, seconds: number) => generate({ secret, epoch: seconds });
  const stepOf = (seconds: number) => Math.floor(seconds / TOTP_PERIOD_SECONDS);

  it("matches RFC 6238's SHA-1 test vectors (6 digits)", async () => {
    for (const [seconds, code] of [
      [59, '287082'],
      [1111111109, '081804'],
      [1234567890, '005924'],
      [2000000000, '279037'],
    ] as const) {
      nowMs = seconds * 1000;
      await expect(totp.check(RFC_SECRET, code, null)).resolves.toEqual({
        valid: true,
        step: stepOf(seconds),
      });
    }
  });

  it('makes 160-bit base32 secrets and an otpauth URL with issuer and account', () => {
    const secret = totp.newSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(totp.newSecret()).not.toBe(secret);
    const url = new URL(totp.uri(secret, 'TMS', 'ada@example.com'));
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toBe('/TMS:ada@example.com');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ secret, issuer: 'TMS' });
  });

  describe('window', () => {
    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const t = 1_800_000_000; // a step boundary (divisible by 30)

    it.each([
      ['at the start of a step', t],
      ['in the middle of a step', t + 15],
      ['at the last second of a step', t + 29],
    ])('accepts the current code and one step of drift either way %s', async (_label, now) => {
      nowMs = now * 1000 + 999;
      for (const offset of [-1, 0, 1]) {
        const at = now + offset * TOTP_PERIOD_SECONDS;
        await expect(totp.check(secret, await codeAt(secret, at), null)).resolves.toEqual({
          valid: true,
          step: stepOf(at),
        });
      }
    });

    it('refuses codes two steps away in either direction', async () => {
      nowMs = (t + 10) * 1000;
      for (const offset of [-2, 2, -3, 10]) {
        const code = await codeAt(secret, t + 10 + offset * TOTP_PERIOD_SECONDS);
        await expect(totp.check(secret, code, null)).resolves.toEqual({ valid: false, reason: 'WRONG_CODE' });
      }
    });

    it('lets a code expire as the clock moves on', async () => {
      const code = await codeAt(secret, t);
      nowMs = (t + 59) * 1000;
      await expect(totp.check(secret, code, null)).resolves.toMatchObject({ valid: true });
      nowMs = (t + 60) * 1000;
      await expect(totp.check(secret, code, null)).resolves.toEqual({ valid: false, reason: 'WRONG_CODE' });
    });

    it('refuses what is not six digits', async () => {
      nowMs = t * 1000;
      for (const code of ['', '12345', '1234567', 'abcdef', ' 123456']) {
        await expect(totp.check(secret, code, null)).resolves.toEqual({ valid: false, reason: 'WRONG_CODE' });
      }
    });

    it('refuses a code of another secret', async () => {
      nowMs = t * 1000;
      const other = await codeAt('KRSXG5CTMVRXEZLUKRSXG5CTMVRXEZLU', t);
      await expect(totp.check(secret, other, null)).resolves.toMatchObject({ valid: false });
    });
  });

  describe('replay', () => {
    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const t = 1_800_000_000;

    it('refuses the code of a step already used, and of any earlier step', async () => {
      nowMs = (t + 5) * 1000;
      const current = await codeAt(secret, t);
      const previous = await codeAt(secret, t - 30);
      const first = await totp.check(secret, current, null);
      expect(first).toEqual({ valid: true, step: stepOf(t) });
      const used = stepOf(t);
      await expect(totp.check(secret, current, used)).resolves.toEqual({
        valid: false,
        reason: 'REPLAYED_CODE',
      });
      await expect(totp.check(secret, previous, used)).resolves.toEqual({
        valid: false,
        reason: 'REPLAYED_CODE',
      });
    });

    it('accepts the next step after one was used, even within the drift window', async () => {
      nowMs = (t + 5) * 1000;
      const next = await codeAt(secret, t + 30);
      await expect(totp.check(secret, next, stepOf(t))).resolves.toEqual({
        valid: true,
        step: stepOf(t) + 1,
      });
      nowMs = (t + 31) * 1000;
      await expect(totp.check(secret, next, stepOf(t) + 1)).resolves.toEqual({
        valid: false,
        reason: 'REPLAYED_CODE',
      });
    });
  });
});
