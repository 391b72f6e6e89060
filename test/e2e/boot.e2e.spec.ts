import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { Scratch } from '../support/scratch.js';
import { exitOf, freePort, requireBuild, runService, type ServiceProcess, waitForHttp } from '../support/process.js';
import { createTestDatabase } from '../support/database.js';
import { pgUrlFor, TEST_REDIS_URL } from '../support/services.js';
import { eventually } from '../support/http.js';
import { parseMessage, tokenIn } from '../support/smtp.js';

describe('Starting the built service (node dist/main.js)', () => {
  const scratch = new Scratch();
  beforeAll(() => requireBuild());
  afterAll(() => scratch.cleanup());

  it.each([
    [{}, /SVC_JWT_SECRET/],
    [{ SVC_JWT_SECRET: 'too-short-secret' }, /SVC_JWT_SECRET must be at least 32 bytes/],
    [{ SVC_JWT_SECRET: 'x'.repeat(40), SVC_DB_URL: 'mysql://nope' }, /SVC_DB_URL/],
    [{ SVC_JWT_SECRET: 'x'.repeat(40), SVC_ACCESS_TTL: '15 minutes' }, /SVC_ACCESS_TTL/],
    [{ SVC_JWT_SECRET: 'x'.repeat(40), PORT: '70000' }, /PORT/],
    [{ SVC_JWT_SECRET: 'x'.repeat(40), SVC_KVSTORE_URL: 'localhost:6379' }, /SVC_KVSTORE_URL/],
    [{ SVC_JWT_SECRET: 'x'.repeat(40), SVC_LOG_FORMAT: 'xml' }, /SVC_LOG_FORMAT must be text or json/],
  ])('exits non-zero and names the variable for %j', async (env, message) => {
    const proc = runService([], { SVC_DATA_DIR: scratch.dir('tms-boot-'), ...env });
    expect(await exitOf(proc)).toBe(1);
    expect(proc.output()).toMatch(message);
  });

  it('fails at once, without retrying, on a database that waiting will not bring (one that does not exist)', async () => {
    const proc = runService([], {
      SVC_JWT_SECRET: 'x'.repeat(40),
      SVC_DB_URL: pgUrlFor('tms_no_such_database'),
      SVC_KVSTORE_URL: TEST_REDIS_URL,
      SVC_DATA_DIR: scratch.dir('tms-boot-'),
      PORT: String(await freePort()),
    });
    expect(await exitOf(proc)).toBe(1);
    expect(proc.output()).toMatch(/The service failed to start: database "tms_no_such_database" does not exist/);
    expect(proc.output()).not.toMatch(/Retrying/);
  });

  it('retries a database that does not answer', async () => {
    const proc = runService([], {
      SVC_JWT_SECRET: 'x'.repeat(40),
      SVC_DB_URL: `postgres://postgres@127.0.0.1:${await freePort()}/tms`,
      SVC_KVSTORE_URL: TEST_REDIS_URL,
      SVC_DATA_DIR: scratch.dir('tms-boot-'),
      PORT: String(await freePort()),
    });
    try {
      await eventually(async () => (/Unable to connect to the database\. Retrying \(1\)/.test(proc.output()) ? true : undefined));
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  });

  it('exits non-zero and names SVC_DATA_DIR when it cannot write there', async () => {
    const file = join(scratch.dir('tms-boot-file-'), 'a-file');
    writeFileSync(file, 'not a directory');
    const proc = runService(['--dev-defaults'], { SVC_DATA_DIR: join(file, 'data'), PORT: String(await freePort()) });
    expect(await exitOf(proc)).toBe(1);
    expect(proc.output()).toMatch(/Configuration error: SVC_DATA_DIR \(.*a-file\/data\) must be a directory this process can write: ENOTDIR/);
  });

  it('runs on embedded defaults with `--dev-defaults` (npm start) and signs the bootstrap admin in', async () => {
    const dataDir = scratch.dir('tms-embedded-');
    const port = await freePort();
    const proc = runService(['--dev-defaults'], {
      SVC_DATA_DIR: dataDir,
      PORT: String(port),
      SVC_EMBEDDED_DB_PORT: String(await freePort()),
    });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/api/health/ready`, proc);
      const log = proc.output();
      expect(log).toMatch(/database: embedded PostgreSQL/);
      expect(log).toMatch(/key-value store: in-process store/);
      expect(log).toMatch(new RegExp(`Listening on http://localhost:${port}`));
      expect(log).toMatch(/Bootstrap administrator: admin@tms\.local/);

      const passwordFile = join(dataDir, 'secrets', 'bootstrap-admin-password');
      expect(statSync(passwordFile).mode & 0o077).toBe(0);
      const password = readFileSync(passwordFile, 'utf8').trim();
      expect(log).not.toContain(password);
      const res = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin@tms.local', password }),
      });
      expect(res.status).toBe(200);
      const { accessToken } = (await res.json()) as { accessToken: string };
      const me = await fetch(`http://127.0.0.1:${port}/api/auth/me`, { headers: { authorization: `Bearer ${accessToken}` } });
      expect(((await me.json()) as { admin: boolean }).admin).toBe(true);

      // Without SMTP_HOST, registration still completes: the message goes to the log and to the outbox.
      const post = (path: string, body: object) =>
        fetch(`http://127.0.0.1:${port}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect((await post('/api/auth/register', { fullName: 'New Comer', email: 'newcomer@example.com' })).status).toBe(202);
      await eventually(async () => (proc.output().includes('Mail sent: verification') ? true : undefined), 15_000);
      const outbox = join(dataDir, 'outbox');
      const [file] = readdirSync(outbox).filter((f) => f.endsWith('-verification.eml'));
      const mail = parseMessage(readFileSync(join(outbox, file), 'utf8'));
      expect(mail.headers.to).toBe('newcomer@example.com');
      const token = tokenIn(mail);
      const sentLine = proc.output().split('\n').find((l) => l.includes('Mail sent: verification'))!;
      expect(sentLine).not.toContain(token);
      expect((await post('/api/auth/verify-email', { token, password: 'newcomer-password-1' })).status).toBe(204);
      const signIn = await post('/api/auth/login', { username: 'newcomer@example.com', password: 'newcomer-password-1' });
      expect(signIn.status).toBe(200);
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  }, 90_000);

  it('says why the embedded database cannot start, and takes over one that a killed run left behind', async () => {
    const dataDir = scratch.dir('tms-embedded-held-');
    const dbPort = String(await freePort());
    const start = async () => {
      const port = await freePort();
      const proc = runService(['--dev-defaults'], { SVC_DATA_DIR: dataDir, PORT: String(port), SVC_EMBEDDED_DB_PORT: dbPort });
      return { proc, ready: () => waitForHttp(`http://127.0.0.1:${port}/api/health/ready`, proc) };
    };
    const postmaster = () => Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const running: ServiceProcess[] = [];
    try {
      const first = await start();
      running.push(first.proc);
      await first.ready();

      // A second instance on the same data: PostgreSQL's own reason, not an empty error.
      const second = await start();
      running.push(second.proc);
      expect(await exitOf(second.proc)).toBe(1);
      expect(second.proc.output()).toMatch(
        /The service failed to start: The embedded PostgreSQL in .*tms-embedded-held-.* did not start: FATAL: lock file "postmaster.pid" already exists HINT: Is another postmaster \(PID \d+\) running/,
      );

      // Killed outright, the first leaves its PostgreSQL running: the next start stops it and starts its own.
      const orphan = postmaster();
      first.proc.child.kill('SIGKILL');
      await first.proc.exited;
      const third = await start();
      running.push(third.proc);
      await third.ready();
      expect(third.proc.output()).toContain(`Stopping the embedded PostgreSQL (PID ${orphan}) that a previous run left holding`);
      expect(postmaster()).not.toBe(orphan);
    } finally {
      for (const proc of running) {
        proc.child.kill('SIGTERM');
        await proc.exited;
      }
      try {
        process.kill(postmaster(), 'SIGINT'); // one still left behind, if this test failed
      } catch {
        // none
      }
    }
  }, 120_000);

  it('stops the embedded database it started when it cannot listen on its port', async () => {
    const dataDir = scratch.dir('tms-embedded-port-');
    const taken = net.createServer();
    await new Promise<void>((done) => taken.listen(0, done));
    try {
      const proc = runService(['--dev-defaults'], {
        SVC_DATA_DIR: dataDir,
        PORT: String((taken.address() as net.AddressInfo).port),
        SVC_EMBEDDED_DB_PORT: String(await freePort()),
      });
      expect(await exitOf(proc)).toBe(1);
      expect(proc.output()).toMatch(/The service failed to start: listen EADDRINUSE/);
      expect(proc.output()).toMatch(/database: embedded PostgreSQL/);
      // Its PostgreSQL is not left running: it removes its lock file as it stops.
      await eventually(async () => (existsSync(join(dataDir, 'postgres', 'postmaster.pid')) ? undefined : true));
    } finally {
      taken.close();
    }
  }, 60_000);

  it('logs plain text off a terminal (no colour codes), or one JSON object a line with SVC_LOG_FORMAT=json', async () => {
    const database = await createTestDatabase();
    const start = async (env: Record<string, string>) => {
      const port = await freePort();
      const proc = runService([], {
        SVC_JWT_SECRET: 'x'.repeat(40),
        SVC_DB_URL: database.url,
        SVC_KVSTORE_URL: TEST_REDIS_URL,
        SVC_DATA_DIR: scratch.dir('tms-logs-'),
        PORT: String(port),
        ...env,
      });
      try {
        await waitForHttp(`http://127.0.0.1:${port}/api/health/ready`, proc);
        await eventually(async () => (/Listening on/.test(proc.output()) ? true : undefined));
      } finally {
        proc.child.kill('SIGTERM');
        await proc.exited;
      }
      return proc.output().split('\n').filter(Boolean);
    };
    try {
      // NO_COLOR unset: output to a pipe is still without ANSI escapes.
      const text = await start({ NO_COLOR: '' });
      expect(text.find((line) => line.includes('Listening on'))).toMatch(/^\[Nest\] \d+ {2}- .* LOG \[Boot\] Listening on http/);
      expect(text.join('\n')).not.toContain('\u001b[');

      const json = (await start({ SVC_LOG_FORMAT: 'json' })).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(json).toContainEqual(
        expect.objectContaining({ level: 'log', context: 'Boot', message: expect.stringMatching(/^Listening on http/) }),
      );
      for (const entry of json) {
        expect(entry).toEqual(expect.objectContaining({ level: expect.any(String), message: expect.anything(), timestamp: expect.any(Number) }));
      }
    } finally {
      await database.drop();
    }
  }, 60_000);

  it('warns when embedded parts run beside real ones', async () => {
    const port = await freePort();
    const database = await createTestDatabase();
    const proc = runService([], {
      SVC_JWT_SECRET: 'x'.repeat(40),
      SVC_DB_URL: database.url,
      SVC_DATA_DIR: scratch.dir('tms-mixed-'),
      PORT: String(port),
    });
    try {
      await waitForHttp(`http://127.0.0.1:${port}/api/health`, proc);
      expect(proc.output()).toMatch(/WARN.*[Ee]mbedded key-value store/);
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
      await database.drop();
    }
  }, 60_000);

  it('is started with the same V8 flags wherever it is shipped: the start scripts, the image, the benches', () => {
    const flag = '--max-semi-space-size=16';
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe(`node ${flag} dist/main.js --dev-defaults`);
    expect(scripts['start:prod']).toBe(`node ${flag} dist/main.js`);
    expect(readFileSync('Dockerfile', 'utf8')).toMatch(new RegExp(`^CMD \\["node", "${flag}", "dist/main.js"\\]$`, 'm'));
    expect(readFileSync('bench/lib/services.mjs', 'utf8')).toContain(`export const SERVICE_NODE_FLAGS = ['${flag}'];`);
    // And the flag V8 reads at run time is set by the service itself, whoever starts it.
    expect(readFileSync('src/main.ts', 'utf8')).toContain("setFlagsFromString('--no-allocation-site-pretenuring');");
  });
});
