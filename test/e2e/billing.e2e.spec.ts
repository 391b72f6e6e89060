import { createHmac } from 'node:crypto';
import request from 'supertest';
import { BillingService } from '../../src/billing/billing.service.js';
import { insertUser } from '../factories/user.factory.js';
import { ADMIN_EMAIL, RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login, Session } from '../support/http.js';
import { TestRelay } from '../support/smtp.js';

const SECRET = 'billing-webhook-secret-for-tests';
const DAY = 86_400_000;

describe('Subscription, billing webhook and billing notices', () => {
  let relay: TestRelay;
  let deployment: TestDeployment;
  let a: RunningApp;
  let b: RunningApp;
  let admin: Session;
  let otherAdmin: string;

  beforeAll(async () => {
    relay = await new TestRelay().start();
    deployment = new TestDeployment(relay.env({ SVC_BILLING_WEBHOOK_SECRET: SECRET, SVC_MAIL_RATE_PER_RECIPIENT: '100' }));
    [a, b] = await deployment.start(2);
    admin = await login(a.url);
    otherAdmin = (await insertUser(a.dataSource, { admin: true })).email;
  });
  afterAll(async () => {
    await deployment.stop();
    await relay.close();
  });

  const subjects = (address: string) => relay.to(address).map((m) => m.subject);
  const waitFor = (address: string, pattern: RegExp, count = 1) =>
    eventually(async () => (subjects(address).filter((s) => pattern.test(s)).length >= count ? true : undefined));
  const settle = () => new Promise((r) => setTimeout(r, 1_500));
  const put = (body: object) =>
    request(a.url).put('/api/admin/subscription').set('Authorization', `Bearer ${admin.accessToken}`).send(body);
  const webhook = (body: object, secret = SECRET) => {
    const raw = JSON.stringify(body);
    return request(b.url)
      .post('/api/billing/events')
      .set('Content-Type', 'application/json')
      .set('X-Signature', createHmac('sha256', secret).update(raw).digest('hex'))
      .send(raw);
  };

  it('shows the subscription to platform admins only', async () => {
    const res = await request(a.url).get('/api/admin/subscription').set('Authorization', `Bearer ${admin.accessToken}`).expect(200);
    expect(res.body).toEqual({
      plan: 'TRIAL',
      seats: 10,
      seatsUsed: 2,
      periodEnd: expect.stringMatching(/Z$/),
      status: 'TRIAL',
    });
    const user = await insertUser(a.dataSource);
    const session = await login(a.url, user.email, user.password);
    await request(a.url).get('/api/admin/subscription').set('Authorization', `Bearer ${session.accessToken}`).expect(403);
    await request(a.url).put('/api/admin/subscription').set('Authorization', `Bearer ${session.accessToken}`).send({}).expect(403);
    await put({ status: 'GONE' }).expect(400);
    await put({ seats: -1 }).expect(400);
    await put({ owner: 'me' }).expect(400);
  });

  it('a status change by an admin sends its notice to every platform admin', async () => {
    await put({ status: 'PAST_DUE' }).expect(200);
    await waitFor(ADMIN_EMAIL, /payment failed/);
    await waitFor(otherAdmin, /payment failed/);
    const res = await put({ status: 'ACTIVE', plan: 'TEAM', seats: 25 }).expect(200);
    expect(res.body).toMatchObject({ status: 'ACTIVE', plan: 'TEAM', seats: 25 });
    await waitFor(ADMIN_EMAIL, /payment received/);
    const [receipt] = relay.to(ADMIN_EMAIL).filter((m) => /payment received/.test(m.subject));
    expect(receipt.text).toMatch(/TEAM subscription/);
    expect(receipt.text).toMatch(/platform administrator/);
    const audit = await a.dataSource.query(`SELECT count(*)::int AS n FROM audit_events WHERE type = 'SUBSCRIPTION_CHANGED'`);
    expect(audit[0].n).toBeGreaterThanOrEqual(2);
  });

  it('accepts billing events only with a valid HMAC signature of the raw body', async () => {
    const before = relay.messages.length;
    await request(b.url).post('/api/billing/events').send({ type: 'payment.failed' }).expect(401);
    const forged = await webhook({ type: 'payment.failed' }, 'not-the-secret').expect(401);
    expect(forged.body).toMatchObject({ status: 401, error: 'Unauthorized' });
    await webhook({ type: 'payment.refunded' }).expect(400);
    await settle();
    expect(relay.messages.length).toBe(before);

    await webhook({ type: 'payment.failed', id: 'evt_1', reason: 'card declined' }).expect(204);
    await waitFor(ADMIN_EMAIL, /payment failed/, 2);
    expect((await request(a.url).get('/api/admin/subscription').set('Authorization', `Bearer ${admin.accessToken}`)).body.status).toBe(
      'PAST_DUE',
    );

    const periodEnd = new Date(Date.now() + 30 * DAY).toISOString();
    await webhook({ type: 'payment.succeeded', id: 'evt_2', periodEnd, amount: '49.00 EUR', invoiceId: 'INV-7' }).expect(204);
    await webhook({ type: 'payment.succeeded', id: 'evt_2', periodEnd, amount: '49.00 EUR', invoiceId: 'INV-7' }).expect(204);
    await waitFor(ADMIN_EMAIL, /payment received/, 2);
    await settle();
    const receipts = relay.to(ADMIN_EMAIL).filter((m) => /payment received/.test(m.subject));
    expect(receipts).toHaveLength(2); // the repeated event id sent nothing
    expect(receipts[1].text).toContain('INV-7');
    const sub = (await request(a.url).get('/api/admin/subscription').set('Authorization', `Bearer ${admin.accessToken}`)).body;
    expect(sub).toMatchObject({ status: 'ACTIVE', periodEnd });
  });

  it('the scheduled check sends each renewal reminder and the expiry once, whichever replicas run it', async () => {
    const check = () => Promise.all([a, b, a, b].map((r) => r.app.get(BillingService).checkSubscription()));

    await put({ periodEnd: new Date(Date.now() + 10 * DAY).toISOString() }).expect(200);
    await check();
    await check();
    await waitFor(ADMIN_EMAIL, /renews in 10 days/);

    await put({ periodEnd: new Date(Date.now() + 2 * DAY + 60_000).toISOString() }).expect(200);
    await check();
    await check();
    await waitFor(otherAdmin, /renews in 3 days/);

    await put({ periodEnd: new Date(Date.now() - 60_000).toISOString() }).expect(200);
    await check();
    await check();
    await waitFor(ADMIN_EMAIL, /has expired/);
    await settle();
    for (const address of [ADMIN_EMAIL, otherAdmin]) {
      expect(subjects(address).filter((s) => /renews in/.test(s))).toHaveLength(2);
      expect(subjects(address).filter((s) => /has expired/.test(s))).toHaveLength(1);
    }
    const sub = (await request(a.url).get('/api/admin/subscription').set('Authorization', `Bearer ${admin.accessToken}`)).body;
    expect(sub.status).toBe('EXPIRED');
  });

  it('tells the admins when an invitation would exceed the seats (once a day)', async () => {
    const used = (await request(a.url).get('/api/admin/subscription').set('Authorization', `Bearer ${admin.accessToken}`)).body.seatsUsed;
    await put({ seats: used + 1 }).expect(200);
    const invite = (email: string) =>
      request(a.url).post('/api/workspace/invitations').set('Authorization', `Bearer ${admin.accessToken}`).send({ email }).expect(202);
    await invite('seat-one@example.com');
    await settle();
    expect(subjects(ADMIN_EMAIL).filter((s) => /seat limit/.test(s))).toHaveLength(0);
    await invite('seat-two@example.com');
    await waitFor(ADMIN_EMAIL, /seat limit/);
    await invite('seat-three@example.com');
    await settle();
    const notices = relay.to(ADMIN_EMAIL).filter((m) => /seat limit/.test(m.subject));
    expect(notices).toHaveLength(1);
    expect(notices[0].text).toContain('seat-two@example.com');
  });
});
