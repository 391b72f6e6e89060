import { randomBytes } from 'node:crypto';
import { jest } from '@jest/globals';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import { generate } from 'otplib';
import { makeUser } from '../../test/factories/user.factory.js';
import type { AppConfig } from '../config/app-config.js';
import { MemoryKeyValueStore } from '../infra/kv/memory-key-value.store.js';
import type { UserCache } from '../users/user-cache.js';
import type { UsersRepository } from '../users/users.repository.js';
import { Totp } from './totp.js';
import { TwoFactorCrypto } from './two-factor-crypto.js';
import type { TwoFactorRepository, TwoFactorRow } from './two-factor.repository.js';
import { FAILURES_BEFORE_REVOKE, TwoFactorService, VERIFY_PER_MINUTE } from './two-factor.service.js';

/** The repository's conditional updates, in memory: one user's secret and codes. */
class InMemoryTwoFactorRepository {
  row: TwoFactorRow | null = null;
  codes = new Map<string, boolean>();
  constructor(private readonly user: { twoFactorEnabled: boolean }) {}
  async find() {
    return this.row && { ...this.row };
  }
  async startEnrolment(_u: string, secretEncrypted: string, hashes: string[]) {
    if (this.row?.active) {return false;}
    this.row = { secretEncrypted, active: false, lastUsedStep: null };
    this.codes = new Map(hashes.map((h) => [h, false]));
    return true;
  }
  async activate(_u: string, step: number) {
    if (!this.row || this.row.active) {return false;}
    Object.assign(this.row, { active: true, lastUsedStep: step });
    this.user.twoFactorEnabled = true;
    return true;
  }
  async useStep(_u: string, step: number) {
    if (!this.row?.active || (this.row.lastUsedStep !== null && this.row.lastUsedStep >= step)) {return false;}
    this.row.lastUsedStep = step;
    return true;
  }
  async useRecoveryCode(_u: string, hash: string) {
    if (!this.row?.active || this.codes.get(hash) !== false) {return false;}
    this.codes.set(hash, true);
    return true;
  }
  async remainingRecoveryCodes() {
    return [...this.codes.values()].filter((used) => !used).length;
  }
  async disable(_u: string, step: number) {
    if (!this.row?.active || (this.row.lastUsedStep !== null && this.row.lastUsedStep >= step)) {return false;}
    this.row = null;
    this.codes.clear();
    this.user.twoFactorEnabled = false;
    return true;
  }
}

describe(TwoFactorService.name, () => {
  const t0 = 1_800_000_000; // a step boundary
  let nowMs: number;
  let user: ReturnType<typeof makeUser>;
  let repo: InMemoryTwoFactorRepository;
  let kv: MemoryKeyValueStore;
  let events: { emit: ReturnType<typeof jest.fn> };
  let sut: TwoFactorService;
  let secret: string;
  let recoveryCodes: string[];
  const codeAt = (seconds: number) => generate({ secret, epoch: seconds });
  const audits = (type: string) =>
    events.emit.mock.calls
      .filter(([name, r]) => name === 'audit.record' && (r as { type: string }).type === type)
      .map(([, r]) => r);

  beforeEach(async () => {
    nowMs = t0 * 1000;
    user = makeUser({ id: '9', email: 'ada@example.com' });
    repo = new InMemoryTwoFactorRepository(user);
    kv = new MemoryKeyValueStore();
    events = { emit: jest.fn() };
    sut = new TwoFactorService(
      repo as unknown as TwoFactorRepository,
      new Totp({ now: () => nowMs }),
      new TwoFactorCrypto(randomBytes(32)),
      { findById: async () => user } as unknown as UsersRepository,
      { invalidate: () => Promise.resolve() } as unknown as UserCache,
      kv,
      { mail: { productName: 'TMS' } } as AppConfig,
      events as unknown as EventEmitter2,
    );
    ({ secret, recoveryCodes } = await sut.enroll(user.id));
  });
  afterEach(() => kv.close());

  it('keeps an enrolment pending until a valid code, then is active and refuses a new enrolment', async () => {
    expect(repo.row?.secretEncrypted).not.toContain(secret);
    await expect(sut.status(user.id)).resolves.toEqual({
      enabled: false,
      pending: true,
      recoveryCodesRemaining: 0,
    });
    await expect(sut.activate(user.id, '000000', 'ip')).rejects.toMatchObject({ code: 'VALIDATION' });
    await sut.activate(user.id, await codeAt(t0), 'ip');
    await expect(sut.status(user.id)).resolves.toEqual({
      enabled: true,
      pending: false,
      recoveryCodesRemaining: 10,
    });
    await expect(sut.enroll(user.id)).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(audits('TWO_FACTOR_ENABLED')).toHaveLength(1);
    expect(events.emit).toHaveBeenCalledWith(
      'account.security-notice',
      expect.objectContaining({ kind: 'TWO_FACTOR_ENABLED' }),
    );
  });

  it('replaces a pending enrolment: the first secret no longer activates', async () => {
    const first = secret;
    ({ secret } = await sut.enroll(user.id));
    expect(secret).not.toBe(first);
    await expect(
      sut.activate(user.id, await generate({ secret: first, epoch: t0 }), 'ip'),
    ).rejects.toMatchObject({
      code: 'VALIDATION',
    });
    await sut.activate(user.id, await codeAt(t0), 'ip');
  });

  describe('the second login step', () => {
    beforeEach(async () => {
      await sut.activate(user.id, await codeAt(t0), 'ip');
      nowMs = (t0 + 30) * 1000; // the activation used step t0
    });
    const challenge = async () => (await sut.startChallenge(user.id)).challengeToken;

    it('signs in once per challenge with the current code, and refuses the same code again in its step', async () => {
      const code = await codeAt(t0 + 30);
      const token = await challenge();
      await expect(sut.completeChallenge(token, code, 'ip')).resolves.toMatchObject({ method: 'TOTP' });
      await expect(sut.completeChallenge(token, await codeAt(t0 + 60), 'ip')).rejects.toMatchObject({
        code: 'UNAUTHENTICATED',
        message: expect.stringContaining('challenge'),
      });
      await expect(sut.completeChallenge(await challenge(), code, 'ip')).rejects.toMatchObject({
        code: 'UNAUTHENTICATED',
      });
      expect(audits('TWO_FACTOR_FAILURE')).toEqual([
        expect.objectContaining({ details: expect.objectContaining({ reason: 'REPLAYED_CODE' }) }),
      ]);
      nowMs = (t0 + 60) * 1000;
      await expect(
        sut.completeChallenge(await challenge(), await codeAt(t0 + 60), 'ip'),
      ).resolves.toMatchObject({ method: 'TOTP' });
    });

    it('accepts one step of drift either way, not two', async () => {
      nowMs = (t0 + 95) * 1000; // step t0+90; the drift window is t0+60 .. t0+120
      await expect(
        sut.completeChallenge(await challenge(), await codeAt(t0 + 30), 'ip'),
      ).rejects.toMatchObject({
        code: 'UNAUTHENTICATED',
      });
      await expect(
        sut.completeChallenge(await challenge(), await codeAt(t0 + 120), 'ip'),
      ).resolves.toBeDefined();
      nowMs = (t0 + 155) * 1000; // step t0+150
      await expect(
        sut.completeChallenge(await challenge(), await codeAt(t0 + 150 - 30), 'ip'),
      ).rejects.toBeDefined(); // used
      await expect(
        sut.completeChallenge(await challenge(), await codeAt(t0 + 180), 'ip'),
      ).resolves.toBeDefined();
    });

    it('takes each recovery code once, in any case and spacing', async () => {
      const [first] = recoveryCodes;
      await expect(
        sut.completeChallenge(await challenge(), first.toLowerCase().replace('-', ' '), 'ip'),
      ).resolves.toMatchObject({
        method: 'RECOVERY_CODE',
      });
      await expect(sut.completeChallenge(await challenge(), first, 'ip')).rejects.toMatchObject({
        code: 'UNAUTHENTICATED',
      });
      expect(audits('RECOVERY_CODE_USED')).toEqual([expect.objectContaining({ details: { remaining: 9 } })]);
      expect(JSON.stringify(events.emit.mock.calls)).not.toContain(first);
    });

    it(`answers the ${VERIFY_PER_MINUTE + 1}th attempt in a minute with 429, the right code included`, async () => {
      const token = await challenge();
      for (let i = 0; i < VERIFY_PER_MINUTE; i++) {
        await expect(sut.completeChallenge(token, '000000', 'ip')).rejects.toMatchObject({
          code: 'UNAUTHENTICATED',
        });
      }
      await expect(sut.completeChallenge(token, await codeAt(t0 + 30), 'ip')).rejects.toMatchObject({
        code: 'RATE_LIMITED',
      });
    });

    it('does not count attempts with an invalid challenge', async () => {
      for (let i = 0; i < 10; i++) {
        await expect(sut.completeChallenge('forged', '000000', 'ip')).rejects.toMatchObject({
          code: 'UNAUTHENTICATED',
        });
      }
      await expect(
        sut.completeChallenge(await challenge(), await codeAt(t0 + 30), 'ip'),
      ).resolves.toBeDefined();
    });

    it(`kills every pending challenge after ${FAILURES_BEFORE_REVOKE} wrong codes in a row, and audits it`, async () => {
      const pending = await challenge();
      for (let i = 1; i <= FAILURES_BEFORE_REVOKE; i++) {
        await kv.delete(`2fa-verify:${user.id}`); // a minute passes between every five attempts
        await expect(sut.completeChallenge(await challenge(), '000000', 'ip')).rejects.toMatchObject({
          code: 'UNAUTHENTICATED',
        });
      }
      expect(audits('TWO_FACTOR_FAILURE').at(-1)).toMatchObject({
        details: { consecutiveFailures: FAILURES_BEFORE_REVOKE, challengesRevoked: true },
      });
      await expect(sut.completeChallenge(pending, await codeAt(t0 + 30), 'ip')).rejects.toMatchObject({
        message: expect.stringContaining('challenge'),
      });
      await expect(
        sut.completeChallenge(await challenge(), await codeAt(t0 + 30), 'ip'),
      ).resolves.toBeDefined();
    });

    it('resets the run of failures on success', async () => {
      for (let i = 0; i < 3; i++) {
        await expect(sut.completeChallenge(await challenge(), '000000', 'ip')).rejects.toBeDefined();
      }
      await sut.completeChallenge(await challenge(), await codeAt(t0 + 30), 'ip');
      await expect(kv.get(`2fa-failures:${user.id}`)).resolves.toBeNull();
    });
  });

  describe('disable', () => {
    beforeEach(async () => {
      await sut.activate(user.id, await codeAt(t0), 'ip');
    });

    it('needs a current code not yet used; then deletes the secret and the recovery codes', async () => {
      await expect(sut.disable(user.id, await codeAt(t0), 'ip')).rejects.toMatchObject({
        code: 'VALIDATION',
      });
      nowMs = (t0 + 30) * 1000;
      await sut.disable(user.id, await codeAt(t0 + 30), 'ip');
      expect(repo.row).toBeNull();
      expect(repo.codes.size).toBe(0);
      await expect(sut.status(user.id)).resolves.toEqual({
        enabled: false,
        pending: false,
        recoveryCodesRemaining: 0,
      });
      expect(audits('TWO_FACTOR_DISABLED')).toHaveLength(1);
      expect(events.emit).toHaveBeenCalledWith(
        'account.security-notice',
        expect.objectContaining({ kind: 'TWO_FACTOR_DISABLED' }),
      );
      await expect(sut.disable(user.id, await codeAt(t0 + 30), 'ip')).rejects.toMatchObject({
        code: 'CONFLICT',
      });
    });

    it('refuses a recovery code', async () => {
      await expect(sut.disable(user.id, recoveryCodes[0], 'ip')).rejects.toMatchObject({
        code: 'VALIDATION',
      });
      expect(repo.row?.active).toBe(true);
    });
  });
});
