import request from 'supertest';
import { startApp, TestDeployment } from '../support/app.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { eventually } from '../support/http.js';
import { silentRelay, TestRelay, tokenIn } from '../support/smtp.js';

const register = (url: string, email: string) =>
  request(url).post('/api/auth/register').send({ fullName: 'Someone', email });

describe('Mail delivery: background sending, durability and the per-recipient limit', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  const outboxOf = (app: { dataSource: { query: (q: string, p: unknown[]) => Promise<unknown[]> } }, email: string) =>
    app.dataSource.query(`SELECT status, attempts, last_error FROM mail_outbox WHERE recipient = $1`, [email]) as Promise<
      { status: string; attempts: number; last_error: string | null }[]
    >;

  it('a relay that never greets holds no request: 202 at once, the send fails after the 10 s timeout and is retried later', async () => {
    const silent = await silentRelay();
    const app = await startApp({ SVC_DB_URL: database.url, SMTP_HOST: '127.0.0.1', SMTP_PORT: String(silent.port) });
    try {
      await register(app.url, 'patient@example.com').expect(202);
      // The answer came while the relay still had not said a word: the message (stored just after the answer) is
      // pending, not attempted yet.
      const stored = await eventually(async () => {
        const rows = await outboxOf(app, 'patient@example.com');
        return rows.length ? rows : undefined;
      });
      expect(stored).toEqual([{ status: 'PENDING', attempts: 0, last_error: null }]);
      expect(silent.connections()).toBeGreaterThanOrEqual(0);
      const [row] = await eventually(async () => {
        const rows = await outboxOf(app, 'patient@example.com');
        return rows[0]?.attempts === 1 ? rows : undefined;
      }, 25_000);
      expect(row).toMatchObject({ status: 'PENDING', last_error: expect.stringMatching(/ETIMEDOUT|Greeting never received/i) });
    } finally {
      await app.close();
      await silent.close();
    }
  }, 40_000);

  it('pending mail survives a restart: a new process sends what the stopped one left in the outbox', async () => {
    const refusing = await new TestRelay({ rejectWith: { code: 451, message: 'Greylisted, try again later' } }).start();
    const first = await startApp({ SVC_DB_URL: database.url, ...refusing.env() });
    await register(first.url, 'durable@example.com').expect(202);
    await eventually(async () => ((await outboxOf(first, 'durable@example.com'))[0]?.attempts === 1 ? true : undefined));
    await first.close();
    await refusing.close();

    const relay = await new TestRelay().start();
    const second = await startApp({ SVC_DB_URL: database.url, ...relay.env() });
    try {
      // Skip the retry backoff instead of waiting for it.
      await second.dataSource.query(`UPDATE mail_outbox SET next_attempt_at = now() WHERE recipient = 'durable@example.com'`);
      const [mail] = await eventually(async () => (relay.to('durable@example.com').length ? relay.to('durable@example.com') : undefined));
      expect(mail.subject).toMatch(/confirm your email/);
      expect(tokenIn(mail)).toHaveLength(43);
      // The relay has it; the outbox row turns SENT right after the relay's answer.
      const rows = await eventually(async () => {
        const found = await outboxOf(second, 'durable@example.com');
        return found[0]?.status === 'SENT' ? found : undefined;
      });
      expect(rows).toEqual([
        { status: 'SENT', attempts: 2, last_error: expect.stringContaining('451') },
      ]);
    } finally {
      await second.close();
      await relay.close();
    }
  });
});

describe('Per-recipient limit across two replicas sharing Redis', () => {
  let relay: TestRelay;
  let deployment: TestDeployment;

  beforeAll(async () => {
    relay = await new TestRelay().start();
    deployment = new TestDeployment(relay.env({ SVC_MAIL_RATE_PER_RECIPIENT: '5', SVC_LOG_LEVEL: 'log' }));
    await deployment.start(2);
  });
  afterAll(async () => {
    await deployment.stop();
    await relay.close();
  });

  it('sends 5 messages per recipient and hour in all, drops the rest silently (202 to the caller every time)', async () => {
    const [a, b] = deployment.replicas;
    for (let i = 0; i < 7; i++) {
      await register((i % 2 ? b : a).url, 'popular@example.com').expect(202);
    }
    await eventually(async () => (relay.to('popular@example.com').length >= 5 ? true : undefined));
    await new Promise((r) => setTimeout(r, 1_500));
    expect(relay.to('popular@example.com')).toHaveLength(5);
    const stored = await a.dataSource.query(`SELECT count(*)::int AS n FROM mail_outbox WHERE recipient = 'popular@example.com'`);
    expect(stored).toEqual([{ n: 5 }]);

    const dropped = async (url: string) => {
      const text = (await request(url).get('/metrics')).text;
      return Number(/^tms_mail_dropped_total (\d+)/m.exec(text)?.[1] ?? 0);
    };
    expect((await dropped(a.url)) + (await dropped(b.url))).toBe(2);
    // Other recipients are not affected.
    await register(b.url, 'someone-else@example.com').expect(202);
    await eventually(async () => (relay.to('someone-else@example.com').length ? true : undefined));
  });

  it('writes `Mail sent: <kind>` without the token, in a replica of its own process', async () => {
    // The in-process replicas' senders poll the same outbox and could send (and log) this message instead.
    await deployment.closeReplicas();
    const replica = await deployment.startProcessReplica();
    await register(replica.url, 'logged@example.com').expect(202);
    const [mail] = await eventually(async () => (relay.to('logged@example.com').length ? relay.to('logged@example.com') : undefined));
    const line = await eventually(async () => replica.output().split('\n').find((l) => l.includes('Mail sent: verification')));
    expect(line).toBeDefined();
    expect(replica.output()).not.toContain(tokenIn(mail));
  }, 60_000);
});
