import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { eventually, login } from '../support/http.js';
import { CapturedMail, TestRelay, tokenIn } from '../support/smtp.js';

describe('Registration, verification and password reset by email', () => {
  let relay: TestRelay;
  let deployment: TestDeployment;
  let app: RunningApp;

  beforeAll(async () => {
    relay = await new TestRelay({ starttls: true, auth: { user: 'mailer', pass: 'mailer-secret' } }).start();
    deployment = new TestDeployment(relay.env({ SVC_BASE_URL: 'https://tms.example.com' }));
    [app] = await deployment.start(1);
  });
  afterAll(async () => {
    await deployment.stop();
    await relay.close();
  });

  const mailTo = (address: string, count = 1): Promise<CapturedMail[]> =>
    eventually(async () => (relay.to(address).length >= count ? relay.to(address) : undefined));
  const outbox = async (address: string) =>
    app.dataSource.query(`SELECT kind, status, body FROM mail_outbox WHERE recipient = $1 ORDER BY id`, [address]);

  it('register → verification email → verify-email with a password → login', async () => {
    const email = 'Ada.Lovelace@Example.com';
    const res = await request(app.url).post('/api/auth/register').send({ fullName: 'Ada Lovelace', email }).expect(202);
    expect(res.body).toEqual({ message: expect.any(String) });

    const [mail] = await mailTo('ada.lovelace@example.com');
    expect(mail.from).toBe('noreply@tms.example.com');
    expect(mail.user).toBe('mailer');
    expect(mail.subject).toMatch(/confirm your email/i);
    expect(mail.text).toContain('Hello Ada Lovelace');
    expect(mail.text).toContain('https://tms.example.com/verify-email?token=');
    expect(mail.text).toMatch(/you received this email because/i);
    expect(mail.raw).not.toMatch(/text\/html/i);

    // Not yet verified: no password, no sign-in.
    await request(app.url).post('/api/auth/login').send({ username: email, password: 'whatever-it-is-1234' }).expect(401);

    const token = tokenIn(mail);
    await request(app.url).post('/api/auth/verify-email').send({ token, password: 'short' }).expect(400);
    // A weak password does not use the token up.
    await request(app.url).post('/api/auth/verify-email').send({ token, password: 'ada.lovelace@example.com' }).expect(400);
    await request(app.url).post('/api/auth/verify-email').send({ token, password: 'analytical-engine-1843' }).expect(204);
    await request(app.url).post('/api/auth/verify-email').send({ token, password: 'analytical-engine-1843' }).expect(400);

    const session = await login(app.url, email, 'analytical-engine-1843');
    const me = await request(app.url).get('/api/auth/me').set('Authorization', `Bearer ${session.accessToken}`).expect(200);
    expect(me.body).toMatchObject({ email: 'ada.lovelace@example.com', fullName: 'Ada Lovelace', emailVerified: true });

    // The body (with its token) is gone from the outbox once sent; the delivery record stays.
    const sent = await eventually(async () => {
      const rows = await outbox('ada.lovelace@example.com');
      return rows[0]?.status === 'SENT' ? rows : undefined;
    });
    expect(sent).toEqual([{ kind: 'verification', status: 'SENT', body: null }]);
    const audit = await app.dataSource.query(`SELECT type FROM audit_events WHERE type = 'EMAIL_VERIFIED'`);
    expect(audit).toHaveLength(1);
  });

  it('a verified address gets the same 202 and no verification email, only a notice to its owner', async () => {
    const user = await insertUser(app.dataSource, { fullName: 'Known Person' });
    const known = await request(app.url).post('/api/auth/register').send({ fullName: 'Impostor', email: user.email }).expect(202);
    const unknown = await request(app.url)
      .post('/api/auth/register')
      .send({ fullName: 'Someone New', email: 'someone-new@example.com' })
      .expect(202);
    expect(known.body).toEqual(unknown.body);
    const [notice] = await mailTo(user.email);
    expect(notice.subject).toMatch(/already have an account/i);
    expect(notice.text).not.toMatch(/token=/);
    // The name typed by the registrant never reaches the owner's mailbox.
    expect(notice.text).not.toContain('Impostor');
  });

  it('an unverified address registered again gets a fresh link; only the newest works', async () => {
    const email = 'twice@example.com';
    await request(app.url).post('/api/auth/register').send({ fullName: 'Twice', email }).expect(202);
    const [first] = await mailTo(email);
    await request(app.url).post('/api/auth/register').send({ fullName: 'Twice', email }).expect(202);
    const mails = await mailTo(email, 2);
    await request(app.url).post('/api/auth/verify-email').send({ token: tokenIn(first), password: 'twice-is-nice-1234' }).expect(400);
    await request(app.url).post('/api/auth/verify-email').send({ token: tokenIn(mails[1]), password: 'twice-is-nice-1234' }).expect(204);
  });

  it('rejects header injection and malformed addresses at the door with 400', async () => {
    const cases = [
      { fullName: 'Eve\r\nBcc: victim@example.com', email: 'eve@example.com' },
      { fullName: 'Eve', email: 'eve@example.com\r\nBcc: victim@example.com' },
      { fullName: 'Eve', email: 'not-an-address' },
      { fullName: 'Eve', email: 'eve@example.com', admin: true },
    ];
    for (const body of cases) {
      const res = await request(app.url).post('/api/auth/register').send(body).expect(400);
      expect(res.body).toMatchObject({ status: 400, error: 'Bad Request', message: expect.any(String) });
    }
    await request(app.url).post('/api/auth/forgot-password').send({ email: 'a@example.com\nBcc: b@example.com' }).expect(400);
    // An unpaired surrogate made the address check itself throw (a 500): now an invalid address like any other.
    const lone = { status: 400, error: 'Bad Request', message: 'email must be an email address' };
    const admin = await login(app.url);
    for (const [path, body, token] of [
      ['/api/auth/register', { fullName: 'Eve', email: 'e\ud800ve@example.com' }],
      ['/api/auth/forgot-password', { email: 'e\ud800ve@example.com' }],
      ['/api/workspace/invitations', { email: 'e\ud800ve@example.com' }, admin.accessToken],
    ] as const) {
      const req = request(app.url).post(path);
      const res = await (token ? req.set('Authorization', `Bearer ${token}`) : req).send(body).expect(400);
      expect(res.body).toEqual(lone);
    }
    expect(relay.to('victim@example.com')).toHaveLength(0);
    expect(await outbox('eve@example.com')).toEqual([]);
  });

  it('forgot → reset email → reset-password → login; every earlier session is revoked', async () => {
    const user = await insertUser(app.dataSource, { fullName: 'Forgetful' });
    const old = await login(app.url, user.email, user.password);

    const res = await request(app.url).post('/api/auth/forgot-password').send({ email: user.email.toUpperCase() }).expect(202);
    const none = await request(app.url).post('/api/auth/forgot-password').send({ email: 'nobody-here@example.com' }).expect(202);
    expect(res.body).toEqual(none.body);

    const [mail] = await mailTo(user.email);
    expect(mail.subject).toMatch(/reset your password/i);
    expect(mail.text).toContain('https://tms.example.com/reset-password?token=');
    const token = tokenIn(mail);

    await request(app.url).post('/api/auth/reset-password').send({ token, password: 'brand-new-password-77' }).expect(204);
    await request(app.url).post('/api/auth/reset-password').send({ token, password: 'another-new-password-78' }).expect(400);

    await request(app.url).post('/api/auth/login').send({ username: user.email, password: user.password }).expect(401);
    await login(app.url, user.email, 'brand-new-password-77');
    // The refresh family of the session from before the reset is dead.
    await request(app.url).post('/api/auth/refresh').set('Cookie', old.refreshCookie).expect(401);

    // A security notice tells the owner the password changed.
    const notices = await mailTo(user.email, 2);
    expect(notices[1].subject).toMatch(/password was changed/i);
    const audit = await app.dataSource.query(`SELECT type FROM audit_events WHERE type = 'PASSWORD_RESET' AND actor_id = $1`, [user.id]);
    expect(audit).toHaveLength(1);
    expect(relay.to('nobody-here@example.com')).toHaveLength(0);
  });

  it('reset tokens expire after an hour', async () => {
    const user = await insertUser(app.dataSource);
    await request(app.url).post('/api/auth/forgot-password').send({ email: user.email }).expect(202);
    const [mail] = await mailTo(user.email);
    const [row] = await app.dataSource.query(
      `SELECT expires_at - created_at AS validity FROM account_tokens WHERE user_id = $1 AND purpose = 'RESET_PASSWORD'`,
      [user.id],
    );
    expect(row.validity).toMatchObject({ hours: 1 });
    await app.dataSource.query(`UPDATE account_tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [user.id]);
    await request(app.url).post('/api/auth/reset-password').send({ token: tokenIn(mail), password: 'too-late-password-123' }).expect(400);
  });

  it('sends at most 3 reset emails per address and hour, still answering 202', async () => {
    const user = await insertUser(app.dataSource);
    for (let i = 0; i < 5; i++) {
      await request(app.url).post('/api/auth/forgot-password').send({ email: user.email }).expect(202);
    }
    await mailTo(user.email, 3);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(relay.to(user.email)).toHaveLength(3);
  });

  it('mails project and workspace invitations with a token that accept takes', async () => {
    const admin = await login(app.url);
    const project = await request(app.url)
      .post('/api/projects')
      .set('Authorization', `Bearer ${admin.accessToken}`)
      .send({ key: 'MAILED', name: 'Mailed project' })
      .expect(201);
    await request(app.url)
      .post(`/api/projects/${project.body.id}/invitations`)
      .set('Authorization', `Bearer ${admin.accessToken}`)
      .send({ email: 'invitee@example.com', role: 'REPORTER' })
      .expect(202);
    const [mail] = await mailTo('invitee@example.com');
    expect(mail.subject).toContain('Mailed project');
    expect(mail.text).toContain('as REPORTER');
    expect(mail.text).toContain('https://tms.example.com/invitations/accept?token=');
    const [invitation] = await app.dataSource.query(`SELECT mailed_at FROM invitations WHERE email = 'invitee@example.com'`);
    expect(invitation.mailed_at).not.toBeNull();

    const accepted = await request(app.url)
      .post('/api/invitations/accept')
      .send({ token: tokenIn(mail), fullName: 'Invited Person', password: 'invited-person-pass-1' })
      .expect(200);
    expect(accepted.body).toMatchObject({ role: 'REPORTER', accountCreated: true });

    await request(app.url)
      .post('/api/workspace/invitations')
      .set('Authorization', `Bearer ${admin.accessToken}`)
      .send({ email: 'colleague@example.com' })
      .expect(202);
    const [workspace] = await mailTo('colleague@example.com');
    expect(workspace.subject).toMatch(/invited you to join/);
  });

  // Last in this file: it uses up this client's forgot-password allowance for the minute.
  it('limits forgot-password per client: 429 with Retry-After: 60 past 10 a minute', async () => {
    const statuses: number[] = [];
    let refused: request.Response | undefined;
    for (let i = 0; i < 12 && !refused; i++) {
      const res = await request(app.url).post('/api/auth/forgot-password').send({ email: `flood-${i}@example.com` });
      statuses.push(res.status);
      refused = res.status === 429 ? res : undefined;
    }
    expect(refused).toBeDefined();
    expect(refused!.headers['retry-after']).toBe('60');
    expect(refused!.body).toMatchObject({ status: 429, error: 'Too Many Requests' });
    expect(statuses.slice(0, -1).every((s) => s === 202)).toBe(true);
  });
});
