import { generate } from 'otplib';
import { Client } from 'pg';
import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import type { RunningApp } from '../support/app.js';
import { eventually, login, refreshCookieFrom } from '../support/http.js';
import { ProxiedApp, startProxiedApp } from '../support/proxied-app.js';
import type { TcpProxy } from '../support/tcp-proxy.js';

const PERIOD = 30;
/** The current TOTP step, once at least `margin` seconds remain in it (a code must not expire in flight). */
async function settledStep(margin = 8): Promise<number> {
  const left = PERIOD - ((Date.now() / 1000) % PERIOD);
  if (left < margin) {
    await new Promise((r) => setTimeout(r, left * 1000 + 50));
  }
  return Math.floor(Date.now() / 1000 / PERIOD);
}

/**
 * Faults, end to end, against the real components: PostgreSQL and Redis each behind a TCP proxy that a test cuts
 * (every connection dropped, no new one accepted: what a restart looks like from the service) and restores. The
 * V2 replica killed mid-stream is test/e2e/replica-crash.e2e.spec.ts. No timed assertion: each test waits for
 * the outcome it expects.
 */
describe('Faults: Redis and PostgreSQL restarted under load', () => {
  let proxied: ProxiedApp;
  let svc: RunningApp;
  let pgProxy: TcpProxy;
  let kvProxy: TcpProxy;

  beforeAll(async () => {
    proxied = await startProxiedApp({ SVC_LOGIN_RATE_PER_MINUTE: '100000' });
    ({ svc, pgProxy, kvProxy } = proxied);
  });
  afterAll(() => proxied?.stop());

  it('Redis restarted while people sign in: refresh and two-factor fail closed, never a second valid family, and work again', async () => {
    const user = await insertUser(svc.dataSource);
    const session = await login(svc.url, user.email, user.password);
    const enrolment = await request(svc.url)
      .post('/api/auth/2fa/enroll')
      .set('Authorization', `Bearer ${session.accessToken}`)
      .expect(200);
    const secret = enrolment.body.secret as string;
    let step = await settledStep();
    await request(svc.url)
      .post('/api/auth/2fa/activate')
      .set('Authorization', `Bearer ${session.accessToken}`)
      .send({ code: await generate({ secret, epoch: step * PERIOD }) })
      .expect(204);
    // A second user without two-factor, whose refresh family is the one raced through the outage.
    const other = await insertUser(svc.dataSource);
    const before = await login(svc.url, other.email, other.password);
    const challenge = (
      await request(svc.url)
        .post('/api/auth/login')
        .send({ username: user.email, password: user.password })
        .expect(200)
    ).body.challengeToken as string;

    await kvProxy.cut();
    // Sign-ins, refreshes and second steps go on meanwhile: none succeeds, none is a 500.
    const attempts = await Promise.all([
      ...Array.from({ length: 5 }, () =>
        request(svc.url).post('/api/auth/login').send({ username: other.email, password: other.password }),
      ),
      ...Array.from({ length: 5 }, () =>
        request(svc.url).post('/api/auth/refresh').set('Cookie', before.refreshCookie),
      ),
      request(svc.url)
        .post('/api/auth/2fa/verify')
        .send({ challengeToken: challenge, code: await generate({ secret, epoch: (step + 1) * PERIOD }) }),
    ]);
    for (const [i, res] of attempts.entries()) {
      expect([i, res.status, [401, 503].includes(res.status)]).toEqual([i, res.status, true]);
      expect(res.headers['set-cookie'] ?? []).not.toEqual(
        expect.arrayContaining([expect.stringMatching(/^svc_refresh=[^;]/)]),
      );
    }

    await kvProxy.restore();
    // Without a restart of the service: the refresh family is the one from before the outage, rotated once.
    const rotated = await eventually(async () => {
      const res = await request(svc.url).post('/api/auth/refresh').set('Cookie', before.refreshCookie);
      return res.status === 200 ? refreshCookieFrom(res) : undefined;
    });
    // The pre-outage token is spent: presenting it again is reuse, which ends the family (the rotated one too).
    await request(svc.url).post('/api/auth/refresh').set('Cookie', before.refreshCookie).expect(401);
    await request(svc.url).post('/api/auth/refresh').set('Cookie', rotated).expect(401);
    // Signing in and the second step work again.
    await request(svc.url)
      .post('/api/auth/login')
      .send({ username: other.email, password: other.password })
      .expect(200);
    step = await settledStep();
    const again = (
      await request(svc.url)
        .post('/api/auth/login')
        .send({ username: user.email, password: user.password })
        .expect(200)
    ).body.challengeToken as string;
    const verified = await request(svc.url)
      .post('/api/auth/2fa/verify')
      .send({ challengeToken: again, code: await generate({ secret, epoch: (step + 1) * PERIOD }) });
    expect(verified.status).toBe(200);
  }, 120_000);

  it('PostgreSQL restarted while V1 batches go on: 503 meanwhile, never a partial batch, recovery by itself', async () => {
    const { accessToken } = await login(svc.url);
    const auth = { Authorization: `Bearer ${accessToken}` };
    const project = (
      await request(svc.url)
        .post('/api/projects')
        .set(auth)
        .send({ key: 'FAULTS', name: 'Faults' })
        .expect(201)
    ).body.id;
    const run = (
      await request(svc.url)
        .post(`/api/projects/${project}/runs`)
        .set(auth)
        .send({ name: 'under fault' })
        .expect(201)
    ).body.id;
    const batch = (n: number) => ({
      results: Array.from({ length: 500 }, (_, i) => ({
        name: `batch ${n} test ${i}`,
        suite: `batch ${n}`,
        status: 'PASSED',
      })),
    });
    const outcomes = new Map<number, number>();
    let n = 0;
    const post = async () => {
      const i = n++;
      const res = await request(svc.url).post(`/api/runs/${run}/results`).set(auth).send(batch(i));
      outcomes.set(i, res.status);
      return res;
    };

    await post();
    for (let round = 0; round < 4; round++) {
      // A batch in flight when the database goes: cut while its request is on its way.
      const inFlight = post();
      await new Promise((r) => setTimeout(r, round * 5));
      await pgProxy.cut();
      const during = await post();
      expect([during.status, during.body.message]).toEqual([503, 'The database is unavailable; retry later']);
      await inFlight;
      await pgProxy.restore();
      // Recovery by itself: a batch goes through again without a restart.
      await eventually(async () => ((await post()).status === 201 ? true : undefined));
    }

    // Straight from PostgreSQL: each batch is stored whole or not at all, and whole when it was answered 201.
    const pg = new Client({ connectionString: proxied.database.url });
    await pg.connect();
    try {
      const rows: { suite: string; n: string }[] = (
        await pg.query('SELECT suite, count(*) AS n FROM results WHERE run_id = $1 GROUP BY suite', [run])
      ).rows;
      const stored = new Map(rows.map((r) => [r.suite, Number(r.n)]));
      for (const [i, status] of outcomes) {
        const count = stored.get(`batch ${i}`) ?? 0;
        // A 503 may still have committed (the answer lost with the connection): whole, then, never in part.
        expect([i, status, status === 201 ? count === 500 : count === 0 || count === 500]).toEqual([
          i,
          status,
          true,
        ]);
        expect([i, [201, 503].includes(status)]).toEqual([i, true]);
      }
      const [{ total }] = (await pg.query('SELECT count_total AS total FROM runs WHERE id = $1', [run]))
        .rows as { total: number }[];
      expect(total).toBe([...stored.values()].reduce((a, b) => a + b, 0));
    } finally {
      await pg.end();
    }
  }, 120_000);
});
