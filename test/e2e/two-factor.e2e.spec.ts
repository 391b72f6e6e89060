import { jest } from '@jest/globals';
import { generate } from 'otplib';
import request from 'supertest';
import { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { AccessTokenService } from '../../src/auth/access-token.service.js';
import { insertUser } from '../factories/user.factory.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login, refreshCookieFrom } from '../support/http.js';
import { TestRelay, tokenIn } from '../support/smtp.js';

const PERIOD = 30;
// stableStep() may wait for the next time step.
jest.setTimeout(30_000);

/**
 * A time step with at least `margin` seconds left in it, waiting for the next one when needed, so that a test
 * can use the codes of steps s-1, s and s+1 (all within one step of drift) without racing the clock.
 */
async function stableStep(margin = 8): Promise<number> {
  const left = PERIOD - ((Date.now() / 1000) % PERIOD);
  if (left < margin) {
    await new Promise((r) => setTimeout(r, left * 1000 + 50));
  }
  return Math.floor(Date.now() / 1000 / PERIOD);
}

const codeAt = (secret: string, step: number): Promise<string> => generate({ secret, epoch: step * PERIOD });

describe('Two-factor authentication (TOTP and recovery codes)', () => {
  let relay: TestRelay;
  let deployment: TestDeployment;
  let a: RunningApp;
  let b: RunningApp;

  beforeAll(async () => {
    relay = await new TestRelay().start();
    // Many password steps from one address in this file: the per-client login limit is not under test here.
    deployment = new TestDeployment(
      relay.env({ SVC_BASE_URL: 'https://tms.example.com', SVC_LOGIN_RATE_PER_MINUTE: '1000' }),
    );
    [a, b] = await deployment.start(2);
  });
  afterAll(async () => {
    await deployment.stop();
    await relay.close();
  });

  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  const audits = (type: string, actorId: number) =>
    a.dataSource
      .getRepository(AuditEventEntity)
      .find({ where: { type, actorId: String(actorId) }, order: { id: 'ASC' } });
  const passwordStep = (url: string, username: string, password: string) =>
    request(url).post('/api/auth/login').send({ username, password }).expect(200);
  const verify = (url: string, challengeToken: string, code: string) =>
    request(url).post('/api/auth/2fa/verify').send({ challengeToken, code });

  /** A user with two-factor active (activated with the code of step s-1), its secret and recovery codes. */
  async function enrolled(step: number, credentials?: { email: string; password: string }) {
    const user = credentials ?? (await insertUser(a.dataSource));
    const { accessToken } = await login(a.url, user.email, user.password);
    const { body } = await request(a.url).post('/api/auth/2fa/enroll').set(bearer(accessToken)).expect(200);
    await request(b.url)
      .post('/api/auth/2fa/activate')
      .set(bearer(accessToken))
      .send({ code: await codeAt(body.secret, step - 1) })
      .expect(204);
    const me = await request(a.url).get('/api/auth/me').set(bearer(accessToken)).expect(200);
    return {
      ...user,
      id: me.body.id as number,
      accessToken,
      secret: body.secret as string,
      recoveryCodes: body.recoveryCodes as string[],
    };
  }

  it('enrols: secret, otpauth URL, QR code and 10 recovery codes; nothing active until a valid code', async () => {
    const user = await insertUser(a.dataSource, { fullName: 'Ada Lovelace' });
    const { accessToken } = await login(a.url, user.email, user.password);
    const res = await request(a.url).post('/api/auth/2fa/enroll').set(bearer(accessToken)).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const { secret, otpauthUrl, qrCodeDataUrl, recoveryCodes } = res.body;
    expect(Object.keys(res.body).sort()).toEqual(['otpauthUrl', 'qrCodeDataUrl', 'recoveryCodes', 'secret']);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/); // 160 bits
    const url = new URL(otpauthUrl);
    expect(`${url.protocol}//${url.host}`).toBe('otpauth://totp');
    expect(decodeURIComponent(url.pathname)).toBe(`/TMS:${user.email}`);
    expect(url.searchParams.get('secret')).toBe(secret);
    expect(url.searchParams.get('issuer')).toBe('TMS');
    expect(qrCodeDataUrl).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);

    // Pending: the password alone still signs in, and GET shows the pending enrolment.
    await expect(
      request(a.url).get('/api/auth/2fa').set(bearer(accessToken)).expect(200),
    ).resolves.toMatchObject({
      body: { enabled: false, pending: true, recoveryCodesRemaining: 0 },
    });
    expect((await passwordStep(b.url, user.email, user.password)).body.accessToken).toEqual(
      expect.any(String),
    );

    // Enrolling again replaces the pending secret; a code of the first one no longer activates.
    const again = await request(a.url).post('/api/auth/2fa/enroll').set(bearer(accessToken)).expect(200);
    expect(again.body.secret).not.toBe(secret);
    const step = await stableStep();
    const wrong = await request(a.url)
      .post('/api/auth/2fa/activate')
      .set(bearer(accessToken))
      .send({ code: await codeAt(secret, step) })
      .expect(400);
    expect(wrong.body).toEqual({ status: 400, error: 'Bad Request', message: expect.stringMatching(/code/) });
    await request(a.url)
      .post('/api/auth/2fa/activate')
      .set(bearer(accessToken))
      .send({ code: 'abc' })
      .expect(400);
    await request(a.url)
      .post('/api/auth/2fa/activate')
      .set(bearer(accessToken))
      .send({ code: await codeAt(again.body.secret, step) })
      .expect(204);

    const status = await request(b.url).get('/api/auth/2fa').set(bearer(accessToken)).expect(200);
    expect(status.body).toEqual({ enabled: true, pending: false, recoveryCodesRemaining: 10 });
    const me = await request(b.url).get('/api/auth/me').set(bearer(accessToken)).expect(200);
    expect(me.body.twoFactorEnabled).toBe(true);
    const conflict = await request(a.url).post('/api/auth/2fa/enroll').set(bearer(accessToken)).expect(409);
    expect(conflict.body.status).toBe(409);

    // At rest: the secret encrypted, the recovery codes hashed; neither in the audit trail.
    const [stored] = await a.dataSource.query(
      `SELECT secret_encrypted FROM two_factor_secrets WHERE user_id = $1`,
      [me.body.id],
    );
    expect(stored.secret_encrypted).toMatch(/^v1:/);
    expect(stored.secret_encrypted).not.toContain(again.body.secret);
    const hashes: { code_hash: string }[] = await a.dataSource.query(
      `SELECT code_hash FROM recovery_codes WHERE user_id = $1`,
      [me.body.id],
    );
    expect(hashes).toHaveLength(10);
    const codes = (again.body.recoveryCodes as string[]).map((c) => c.replace('-', ''));
    expect(hashes.some((h) => codes.some((c) => h.code_hash.includes(c)))).toBe(false);
    const [enabled] = await eventually(async () => {
      const rows = await audits('TWO_FACTOR_ENABLED', me.body.id);
      return rows.length ? rows : undefined;
    });
    expect(JSON.stringify(enabled.details)).not.toMatch(
      new RegExp(`${again.body.secret}|${codes.join('|')}`),
    );

    const [notice] = await eventually(async () =>
      relay.to(user.email).length ? relay.to(user.email) : undefined,
    );
    expect(notice.subject).toBe('TMS: two-factor authentication was turned on');
    expect(notice.text).toContain('Hello Ada Lovelace');
    expect(notice.text).not.toContain(again.body.secret);
  });

  it('requires an interactive session to enrol, activate and disable: an API token gets 403', async () => {
    const user = await insertUser(a.dataSource);
    const { accessToken } = await login(a.url, user.email, user.password);
    const key = await request(a.url)
      .post('/api/users/me/api-keys')
      .set(bearer(accessToken))
      .send({ name: 'ci' })
      .expect(201);
    for (const path of ['enroll', 'activate', 'disable']) {
      const res = await request(a.url)
        .post(`/api/auth/2fa/${path}`)
        .set(bearer(key.body.token))
        .send({ code: '123456' })
        .expect(403);
      expect(res.body).toEqual({
        status: 403,
        error: 'Forbidden',
        message: expect.stringMatching(/API tokens/),
      });
    }
    await request(a.url).get('/api/auth/2fa').set(bearer(key.body.token)).expect(200);
    await request(a.url).post('/api/auth/2fa/enroll').expect(401);
  });

  it('logs in in two steps: the password step grants nothing, the code signs in, once', async () => {
    const step = await stableStep();
    const user = await enrolled(step);

    const first = await passwordStep(a.url, user.email, user.password);
    expect(first.body).toEqual({
      twoFactorRequired: true,
      challengeToken: expect.any(String),
      expiresIn: 300,
    });
    expect(first.headers['set-cookie']).toBeUndefined();
    const { challengeToken } = first.body;
    // The challenge is no credential anywhere.
    await request(a.url).get('/api/auth/me').set(bearer(challengeToken)).expect(401);
    await request(b.url).get('/api/projects').set(bearer(challengeToken)).expect(401);
    await request(a.url).post('/api/auth/refresh').set('Cookie', `svc_refresh=${challengeToken}`).expect(401);

    const wrong = await verify(b.url, challengeToken, '000000').expect(401);
    expect(wrong.body).toEqual({ status: 401, error: 'Unauthorized', message: expect.any(String) });
    const code = await codeAt(user.secret, step);
    const signedIn = await verify(b.url, challengeToken, code).expect(200);
    expect(signedIn.body).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 });
    expect(refreshCookieFrom(signedIn)).toMatch(/^svc_refresh=/);
    await request(a.url).get('/api/auth/me').set(bearer(signedIn.body.accessToken)).expect(200);

    // One login per challenge, even with the next valid code.
    const reused = await verify(a.url, challengeToken, await codeAt(user.secret, step + 1)).expect(401);
    expect(reused.body.message).toMatch(/challenge/);
    // No replay: the same code with a fresh challenge, on the other replica.
    const second = await passwordStep(a.url, user.email, user.password);
    await verify(a.url, second.body.challengeToken, code).expect(401);
    await verify(a.url, second.body.challengeToken, await codeAt(user.secret, step + 1)).expect(200);

    const failures = await eventually(async () => {
      const rows = await audits('TWO_FACTOR_FAILURE', user.id);
      return rows.length >= 2 ? rows : undefined;
    });
    expect(failures.map((f) => f.details.reason)).toEqual(['WRONG_CODE', 'REPLAYED_CODE']);
    const successes = await eventually(async () => {
      const rows = await audits('LOGIN_SUCCESS', user.id);
      return rows.filter((r) => r.details.secondFactor).length >= 2 ? rows : undefined;
    });
    expect(successes.filter((r) => r.details.secondFactor === 'TOTP')).toHaveLength(2);
  });

  it('audits wrong codes at activation, and a rate limit hit there, as at the login step (disabling shares its limit)', async () => {
    const user = await insertUser(a.dataSource);
    const { accessToken } = await login(a.url, user.email, user.password);
    await request(a.url).post('/api/auth/2fa/enroll').set(bearer(accessToken)).expect(200);
    const me = await request(a.url).get('/api/auth/me').set(bearer(accessToken)).expect(200);
    const activate = (code: string) =>
      request(b.url).post('/api/auth/2fa/activate').set(bearer(accessToken)).send({ code });
    for (let i = 0; i < 5; i++) {
      await activate(String(100000 + i)).expect(400);
    }
    await activate('100009').expect(429);
    const failures = await eventually(async () => {
      const rows = await audits('TWO_FACTOR_FAILURE', me.body.id as number);
      return rows.length >= 5 ? rows : undefined;
    });
    expect(failures.map((r) => r.details)).toContainEqual({ action: 'activate', reason: 'WRONG_CODE' });
    const limited = await eventually(async () => {
      const rows = await audits('RATE_LIMIT_HIT', me.body.id as number);
      return rows.length ? rows : undefined;
    });
    expect(limited[0]).toMatchObject({
      target: 'POST /api/auth/2fa/activate',
      details: { scope: 'user', limit: 5 },
    });
  });

  it('ends a challenge given before a password reset: the old password leads nowhere, even with a good code', async () => {
    const step = await stableStep();
    const user = await enrolled(step);
    const before = (await passwordStep(a.url, user.email, user.password)).body.challengeToken as string;
    await request(a.url).post('/api/auth/forgot-password').send({ email: user.email }).expect(202);
    const mail = await eventually(async () =>
      relay.to(user.email).find((m) => m.text.includes('/reset-password?token=')),
    );
    await request(b.url)
      .post('/api/auth/reset-password')
      .send({ token: tokenIn(mail), password: 'a-brand-new-passphrase-41' })
      .expect(204);
    await verify(a.url, before, await codeAt(user.secret, step)).expect(401);
    // The new password's challenge signs in.
    const after = (await passwordStep(b.url, user.email, 'a-brand-new-passphrase-41')).body
      .challengeToken as string;
    await verify(b.url, after, await codeAt(user.secret, step + 1)).expect(200);
  });

  it('lets the same code through only once when two replicas race with it', async () => {
    const step = await stableStep();
    const user = await enrolled(step);
    const challenges = await Promise.all(
      [0, 1, 2, 3].map(() => passwordStep(a.url, user.email, user.password)),
    );
    const code = await codeAt(user.secret, step);
    const results = await Promise.all(
      challenges.map((c, i) => verify(i % 2 ? a.url : b.url, c.body.challengeToken, code)),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401]);
  });

  it('accepts each recovery code once in place of the 6-digit code', async () => {
    const step = await stableStep();
    const user = await enrolled(step);
    const [recovery] = user.recoveryCodes;
    const first = await passwordStep(a.url, user.email, user.password);
    const res = await verify(b.url, first.body.challengeToken, recovery.toLowerCase()).expect(200);
    expect(res.body.accessToken).toEqual(expect.any(String));
    const second = await passwordStep(a.url, user.email, user.password);
    await verify(a.url, second.body.challengeToken, recovery).expect(401);
    const status = await request(a.url).get('/api/auth/2fa').set(bearer(user.accessToken)).expect(200);
    expect(status.body.recoveryCodesRemaining).toBe(9);
    const [used] = await eventually(async () => {
      const rows = await audits('RECOVERY_CODE_USED', user.id);
      return rows.length ? rows : undefined;
    });
    expect(used.details).toEqual({ remaining: 9 });
  });

  it('allows 5 attempts a minute per user across both replicas; the 6th answers 429 with Retry-After: 60', async () => {
    const step = await stableStep();
    const user = await enrolled(step);
    const { challengeToken } = (await passwordStep(a.url, user.email, user.password)).body;
    for (let i = 0; i < 5; i++) {
      await verify(i % 2 ? a.url : b.url, challengeToken, String(100000 + i)).expect(401);
    }
    const limited = await verify(a.url, challengeToken, await codeAt(user.secret, step)).expect(429);
    expect(limited.headers['retry-after']).toBe('60');
    expect(limited.body).toEqual({
      status: 429,
      error: 'Too Many Requests',
      message: expect.stringMatching(/60 seconds/),
    });
    // A new challenge does not reset the user's count.
    const fresh = (await passwordStep(b.url, user.email, user.password)).body.challengeToken;
    await verify(b.url, fresh, await codeAt(user.secret, step)).expect(429);
    // Attempts with a forged challenge are not counted against anyone and say nothing about users.
    await verify(a.url, 'forged-challenge', '123456').expect(401);
  });

  it('kills the pending challenges after 20 wrong codes in a row, and audits it', async () => {
    const step = await stableStep();
    const user = await enrolled(step);
    const pending = (await passwordStep(a.url, user.email, user.password)).body.challengeToken;
    for (let i = 1; i <= 20; i++) {
      if (i % 5 === 1) {
        // The 5-a-minute window, as if a minute had passed (the same key on both replicas).
        await a.kv.delete(`2fa-verify:${user.id}`);
      }
      const { challengeToken } = (await passwordStep(b.url, user.email, user.password)).body;
      await verify(i % 2 ? a.url : b.url, challengeToken, '000000').expect(401);
    }
    await a.kv.delete(`2fa-verify:${user.id}`);
    const dead = await verify(b.url, pending, await codeAt(user.secret, step)).expect(401);
    expect(dead.body.message).toMatch(/challenge/);
    const audit = await eventually(async () => {
      const rows = await audits('TWO_FACTOR_FAILURE', user.id);
      return rows.find((r) => r.details.challengesRevoked);
    });
    expect(audit.details).toMatchObject({ consecutiveFailures: 20, challengesRevoked: true });
    // A new password step works again.
    const fresh = (await passwordStep(a.url, user.email, user.password)).body.challengeToken;
    await verify(a.url, fresh, await codeAt(user.secret, step)).expect(200);
  });

  it('disables with a current 6-digit code only, deleting the secret and the recovery codes', async () => {
    const step = await stableStep();
    const user = await enrolled(step);
    const disable = (code: string) =>
      request(a.url).post('/api/auth/2fa/disable').set(bearer(user.accessToken)).send({ code });
    const recovery = await disable(user.recoveryCodes[0]).expect(400);
    expect(recovery.body.message).toMatch(/6-digit/);
    await disable('000000').expect(400);
    await disable(await codeAt(user.secret, step - 1)).expect(400); // the activation's code: a replay
    await disable(await codeAt(user.secret, step)).expect(204);

    await expect(
      a.dataSource.query(`SELECT 1 FROM two_factor_secrets WHERE user_id = $1`, [user.id]),
    ).resolves.toEqual([]);
    await expect(
      a.dataSource.query(`SELECT 1 FROM recovery_codes WHERE user_id = $1`, [user.id]),
    ).resolves.toEqual([]);
    const status = await request(b.url).get('/api/auth/2fa').set(bearer(user.accessToken)).expect(200);
    expect(status.body).toEqual({ enabled: false, pending: false, recoveryCodesRemaining: 0 });
    await disable(await codeAt(user.secret, step + 1)).expect(409);
    // Back to one step.
    expect((await passwordStep(b.url, user.email, user.password)).body.accessToken).toEqual(
      expect.any(String),
    );
    await eventually(async () => ((await audits('TWO_FACTOR_DISABLED', user.id)).length ? true : undefined));
    await eventually(async () =>
      relay.to(user.email).some((m) => /two-factor authentication was turned off/.test(m.subject))
        ? true
        : undefined,
    );
  });

  it('lets the bootstrap administrator enrol and sign in with two factors', async () => {
    const step = await stableStep();
    const admin = await enrolled(step, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    const challenge = await passwordStep(b.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(challenge.body.twoFactorRequired).toBe(true);
    const res = await verify(a.url, challenge.body.challengeToken, await codeAt(admin.secret, step)).expect(
      200,
    );
    await request(a.url).get('/api/admin/audit').set(bearer(res.body.accessToken)).expect(200);
    await request(a.url)
      .post('/api/auth/2fa/disable')
      .set(bearer(res.body.accessToken))
      .send({ code: await codeAt(admin.secret, step + 1) })
      .expect(204);
  });

  it('lets a directory user enrol and activate (their sign-in itself comes from the directory)', async () => {
    const user = await insertUser(a.dataSource, { authSource: 'LDAP', passwordHash: null });
    const { accessToken } = await a.app.get(AccessTokenService).issue(user.id);
    const { body } = await request(a.url).post('/api/auth/2fa/enroll').set(bearer(accessToken)).expect(200);
    const step = await stableStep();
    await request(b.url)
      .post('/api/auth/2fa/activate')
      .set(bearer(accessToken))
      .send({ code: await codeAt(body.secret, step) })
      .expect(204);
    // Read on the replica that activated: the other one's per-replica user cache may lag by up to a second.
    const me = await request(b.url).get('/api/auth/me').set(bearer(accessToken)).expect(200);
    expect(me.body).toMatchObject({ authSource: 'LDAP', twoFactorEnabled: true });
  });

  it('validates the verify body', async () => {
    const res = await request(a.url).post('/api/auth/2fa/verify').send({ code: 5 }).expect(400);
    expect(res.body.message).toMatch(/challengeToken/);
    expect(res.body.message).toMatch(/code/);
  });
});
