import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import request from 'supertest';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { createProject, login } from '../support/http.js';
import { freePort } from '../support/process.js';
import { OWN_REPORTS, corpus, importedCounts } from '../support/report-corpus.js';

/**
 * The `tms` command (API.md, "Command-line client") as a CI job runs it: the real binary that `npm install` links
 * (node_modules/.bin/tms, its own #!/usr/bin/env node), in a process of its own, against the service on a real port.
 */
const TMS = resolve('node_modules/.bin/tms');

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Every byte the command printed in this file, to check that the token is in none of it. */
const printed: string[] = [];

// Started before the tests are declared, so that a test of a feature the service may not have yet (the gate, the
// quarantine: other branches of the same issue) is skipped only when the service answers 404 for it.
const deployment = new TestDeployment();
const [svc]: RunningApp[] = await deployment.start();
const admin = (await login(svc.url)).accessToken;
const probeProject = await createProject(svc.url, admin, { key: 'PROBE', name: 'Probe' });
const probeRun = await request(svc.url)
  .post(`/api/projects/${probeProject}/runs`)
  .set('Authorization', `Bearer ${admin}`)
  .send({ name: 'probe' })
  .expect(201);
const hasGate =
  (await request(svc.url).get(`/api/runs/${probeRun.body.id}/gate`).set('Authorization', `Bearer ${admin}`))
    .status !== 404;
const hasQuarantine =
  (
    await request(svc.url)
      .get(`/api/projects/${probeProject}/quarantine`)
      .set('Authorization', `Bearer ${admin}`)
  ).status !== 404;

const JUNIT = (suite: string, cases: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="${suite}">\n${cases}\n</testsuite>\n`;
const pass = (name: string) => `  <testcase classname="cli" name="${name}" time="0.01"/>`;
const fail = (name: string, message: string) =>
  `  <testcase classname="cli" name="${name}"><failure message="${message}">at checkout (cart.js:12)</failure></testcase>`;
/** A TestNG report: [name, statuses of its attempts in order]; a test failed then passed is flaky within the run. */
const TESTNG = (tests: [string, ...string[]][]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<testng-results><suite name="s"><test name="t"><class name="cli">\n${tests
    .flatMap(([name, ...statuses]) =>
      statuses.map(
        (status, i) =>
          `  <test-method name="${name}" status="${status}"${i < statuses.length - 1 ? ' retried="true"' : ''} duration-ms="1"/>`,
      ),
    )
    .join('\n')}\n</class></test></suite></testng-results>\n`;

describe('the tms command', () => {
  let token: string;
  let projectId: number;
  let work: string;

  function tms(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
    return new Promise((done, fail) => {
      const child = spawn(TMS, args, {
        cwd: work,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/root',
          TMS_URL: svc.url,
          TMS_TOKEN: token,
          TMS_RETRY_SECONDS: '5',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', fail);
      child.on('close', (code) => {
        printed.push(stdout, stderr);
        done({ code, stdout, stderr });
      });
    });
  }

  /** Writes `files` (name → content) under a new folder of the working directory; answers its name. */
  function folder(name: string, files: Record<string, string>): string {
    mkdirSync(join(work, name), { recursive: true });
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(join(work, name, file, '..'), { recursive: true });
      writeFileSync(join(work, name, file), content);
    }
    return name;
  }

  const api = (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${admin}`);
  const runsOf = async (project: number) =>
    (await api(`/api/projects/${project}/runs?size=100&sort=id,desc`).expect(200)).body.content as {
      id: number;
      name: string;
      attributes: Record<string, string>;
      counts: Record<string, number>;
    }[];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'tms-cli-'));
    // A CI identity: a REPORTER with an API token, as API.md's roles say CI tokens need.
    const reporter = await insertUser(svc.dataSource);
    projectId = await createProject(svc.url, admin, { key: 'CLI', name: 'Command line' });
    await request(svc.url)
      .put(`/api/projects/${projectId}/members/${reporter.id}`)
      .set('Authorization', `Bearer ${admin}`)
      .send({ role: 'REPORTER' })
      .expect(200);
    const jwt = (await login(svc.url, reporter.email, reporter.password)).accessToken;
    token = (
      await request(svc.url)
        .post('/api/users/me/api-keys')
        .set('Authorization', `Bearer ${jwt}`)
        .send({ name: 'ci' })
        .expect(201)
    ).body.token;
  });

  afterAll(async () => {
    rmSync(work, { recursive: true, force: true });
    await deployment.stop();
  });

  afterAll(() => {
    // Output never contains the token (API.md): not in summaries, not in errors, whatever the command printed.
    expect(printed.length).toBeGreaterThan(0);
    for (const text of printed) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(token.slice(8));
    }
  });

  describe('a stream of imports', () => {
    let firstRun: number;
    let secondRun: number;

    it('uploads a directory of reports as one run and prints its summary', async () => {
      folder('reports-1', {
        'a/TEST-cart.xml': JUNIT('cart', [pass('adds an item'), pass('removes an item')].join('\n')),
        'b/testng-results.xml': TESTNG([
          ['pays', 'PASS'],
          ['retries a payment', 'PASS'],
        ]),
        'notes.txt': 'not a report',
      });
      const before = (await runsOf(projectId)).length;
      const out = await tms([
        'import',
        'reports-1',
        '--project',
        'CLI',
        '--run-name',
        'nightly #1',
        '--attr',
        'suite=smoke',
        '--branch',
        'main',
      ]);
      expect(out).toMatchObject({ code: 0, stderr: expect.stringContaining('as one zip') });
      const runs = await runsOf(projectId);
      expect(runs).toHaveLength(before + 1);
      firstRun = runs[0].id;
      expect(runs[0]).toMatchObject({
        name: 'nightly #1',
        attributes: { suite: 'smoke', branch: 'main' },
        counts: expect.objectContaining({ total: 4, passed: 4, failed: 0 }),
      });
      expect(out.stdout).toContain(`Run ${firstRun}: nightly #1`);
      expect(out.stdout).toContain('4 tests: 4 passed, 0 failed, 0 broken, 0 skipped; pass rate 100.0%');
      expect(out.stdout).toContain(`Run: ${svc.url}/runs/${firstRun}`);
    });

    it('expands a glob itself and prints the Markdown summary: new failures with their message, flaky tests, link', async () => {
      folder('reports-2', {
        'TEST-cart.xml': JUNIT(
          'cart',
          [
            pass('adds an item'),
            fail('removes an item', `expected 1 item but found 2 (token ${token})`),
          ].join('\n'),
        ),
        'testng-results.xml': TESTNG([
          ['pays', 'PASS'],
          ['retries a payment', 'FAIL', 'PASS'],
        ]),
      });
      const out = await tms([
        'import',
        'reports-2/*.xml',
        '--project',
        'cli',
        '--run-name',
        'nightly #2',
        '--attr',
        'suite=smoke',
        '--branch',
        'main',
        '--summary',
        'markdown',
      ]);
      expect(out.code).toBe(0);
      secondRun = (await runsOf(projectId))[0].id;
      const md = out.stdout;
      expect(md).toMatch(/^### nightly #2: /);
      expect(md).toContain('| Tests | Passed | Failed | Broken | Skipped | Pass rate |');
      expect(md).toContain('| 4 | 3 | 1 | 0 | 0 | 75.0% |');
      expect(md).toContain('**New failures: 1**');
      // The message as sent, with the token in it scrubbed from the output.
      expect(md).toContain('- ❌ cli › removes an item: expected 1 item but found 2 (token \\*\\*\\*)');
      expect(md).toMatch(/\*\*(Flaky|Quarantined) tests that ran: 1\*\*\n\n- cli › retries a payment/);
      expect(md).toContain(`[Run ${secondRun} in the test management service](${svc.url}/runs/${secondRun})`);
      expect(md).toContain(hasGate ? 'gate FAILED' : 'gate not available');
    });

    it('prints the summary of a run as JSON, and as text by run id', async () => {
      const json = await tms(['summary', '--run', String(secondRun), '--format', 'json']);
      expect(json.code).toBe(0);
      const summary = JSON.parse(json.stdout);
      expect(summary).toMatchObject({
        run: {
          id: secondRun,
          projectId,
          name: 'nightly #2',
          passRate: 0.75,
          url: `${svc.url}/runs/${secondRun}`,
        },
        newFailures: {
          compared: true,
          total: 1,
          tests: [{ name: 'removes an item', status: 'FAILED', message: expect.stringContaining('***') }],
        },
      });
      expect([...summary.flaky.tests, ...summary.quarantined.tests]).toEqual([
        expect.objectContaining({ name: 'retries a payment' }),
      ]);
      const text = await tms(['summary', '--run', String(firstRun)]);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain('Failures: none');
      expect(text.stdout).not.toContain('New failures');
    });

    (hasGate ? it : it.skip)('exits 1 with --gate when the gate FAILED, 0 when it PASSED', async () => {
      // The default gate: no failed test counts (maxFailed 0).
      const failed = await tms([
        'import',
        'reports-2',
        '--project',
        'CLI',
        '--gate',
        '--summary',
        'markdown',
      ]);
      expect(failed.code).toBe(1);
      expect(failed.stdout).toMatch(/\| maxFailed \| [^|]*0 \| 1 \| ❌ \|/);
      expect(failed.stderr).toContain('Gate FAILED');
      const passed = await tms(['import', 'reports-1', '--project', 'CLI', '--gate']);
      expect(passed.code).toBe(0);
      expect(passed.stdout).toContain('Gate: PASSED');
      expect((await tms(['gate', '--run', String(secondRun)])).code).toBe(1);
      const gate = await tms(['gate', '--run', String(firstRun)]);
      expect(gate).toMatchObject({
        code: 0,
        stdout: expect.stringContaining(`Gate of run ${firstRun}: PASSED`),
      });
    });

    (hasGate ? it.skip : it)(
      'says the gate is not available on a service without one, and --gate cannot pass',
      async () => {
        const out = await tms(['summary', '--run', String(secondRun)]);
        expect(out).toMatchObject({ code: 0, stdout: expect.stringContaining('Gate: not available') });
        const gated = await tms(['gate', '--run', String(secondRun)]);
        expect(gated.code).toBe(2);
        expect(gated.stderr).toMatch(/^tms: The service has no quality gate .*404/);
      },
    );
  });

  it('uploads a corpus directory as one run with the counts of all its reports', async () => {
    const dir = join(OWN_REPORTS, 'junit');
    const expected = corpus(OWN_REPORTS)
      .filter(([file]) => file.startsWith('junit/'))
      .map(([file, counts]) => importedCounts(file, counts));
    expect(expected.length).toBe(readdirSync(dir).filter((f) => f.endsWith('.xml')).length);
    const corpusProject = await createProject(svc.url, admin, { key: 'CORPUS', name: 'Corpus' });
    const out = await tms(
      ['import', dir, '--project', String(corpusProject), '--format', 'junit', '--summary', 'json'],
      {
        TMS_TOKEN: admin,
      },
    );
    expect(out.code).toBe(0);
    const runs = await runsOf(corpusProject);
    expect(runs).toHaveLength(1);
    const sum = (key: 'total' | 'passed' | 'failed' | 'broken' | 'skipped') =>
      expected.reduce((n, c) => n + (c[key] ?? 0), 0);
    expect(runs[0].counts).toMatchObject({
      total: sum('total'),
      passed: sum('passed'),
      failed: sum('failed'),
      broken: sum('broken'),
      skipped: sum('skipped'),
    });
    expect(JSON.parse(out.stdout).run.counts).toMatchObject({ total: sum('total') });
  });

  it('shows plain progress lines for a large upload when not on a terminal', async () => {
    // Large to upload, light to import: 1.5 MiB of it is a comment the parser streams past.
    const cases = Array.from({ length: 50 }, (_, i) => pass(`case ${i}`)).join('\n');
    writeFileSync(
      join(work, 'large.xml'),
      JUNIT('large', `<!-- ${'padding '.repeat(196_608)} -->\n${cases}`),
    );
    const out = await tms(['import', 'large.xml', '--project', 'CLI', '--run-name', 'large']);
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/Uploading large\.xml \(\d\.\d MiB\) to project CLI/);
    expect(out.stderr).toMatch(/ 50% \(/);
    expect(out.stderr).not.toContain('\r');
    expect(out.stdout).toContain('50 tests: 50 passed');
  });

  describe('bad input: one line naming the problem, exit 2', () => {
    /** The error: one line, the last (after any line of progress), on standard error. */
    const oneLine = (out: Outcome) => {
      expect(out.stdout).toBe('');
      const lines = out.stderr.trimEnd().split('\n');
      expect(lines.filter((line) => line.startsWith('tms:'))).toEqual([lines.at(-1)]);
      return `${lines.at(-1)}\n`;
    };

    it('a missing file', async () => {
      const out = await tms(['import', 'nowhere/TEST-x.xml', '--project', 'CLI']);
      expect(out.code).toBe(2);
      expect(oneLine(out)).toBe('tms: nowhere/TEST-x.xml: no such file or directory\n');
    });

    it('an empty directory, and a pattern that matches nothing', async () => {
      folder('empty', { 'screenshot.png': 'png' });
      const empty = await tms(['import', 'empty', '--project', 'CLI']);
      expect(empty.code).toBe(2);
      expect(oneLine(empty)).toContain('tms: empty: no report files');
      const none = await tms(['import', 'empty/**/*.xml', '--project', 'CLI']);
      expect(none.code).toBe(2);
      expect(oneLine(none)).toContain('empty/**/*.xml: no file matches');
    });

    it('an unknown project key or id', async () => {
      for (const project of ['NOPE', 'PROBE', '999999']) {
        // PROBE exists, but the token's user cannot see it.
        const out = await tms(['import', 'reports-1', '--project', project]);
        expect(out.code).toBe(2);
        expect(oneLine(out)).toContain(`tms: Unknown project "${project}"`);
      }
    });

    it('a bad token, never retried and never printed', async () => {
      const requests: string[] = [];
      const proxy = await countingProxy(svc.url, requests);
      try {
        const bad = `tms_${'x'.repeat(43)}`;
        const out = await tms([
          'import',
          'reports-1',
          '--project',
          'CLI',
          '--url',
          proxy.url,
          '--token',
          bad,
        ]);
        expect(out.code).toBe(2);
        expect(oneLine(out)).toMatch(/^tms: The service refused the API token \(401 .*\): check TMS_TOKEN/);
        expect(out.stderr).not.toContain(bad);
        expect(requests).toEqual(['GET /api/projects?key=CLI']);
      } finally {
        await proxy.close();
      }
    });

    it('a report the service refuses, with its message', async () => {
      writeFileSync(join(work, 'broken.xml'), '<testsuite><testcase name="a"></testsuite>');
      const out = await tms(['import', 'broken.xml', '--project', 'CLI', '--format', 'junit']);
      expect(out.code).toBe(2);
      expect(oneLine(out)).toMatch(/^tms: The import into CLI was refused: 400 .*line 1/);
    });

    it('bad usage', async () => {
      expect((await tms(['import', 'reports-1'])).stderr).toContain('--project <KEY|id> is needed');
      const unknown = await tms(['import', 'reports-1', '--project', 'CLI', '--bogus']);
      expect(unknown.code).toBe(2);
      expect(oneLine(unknown)).toContain("Unknown option '--bogus'");
      expect((await tms(['summary', '--run', 'latest'])).code).toBe(2);
    });
  });

  describe('an unreachable service', () => {
    it('retries a 503 and then goes on', async () => {
      const requests: string[] = [];
      const proxy = await countingProxy(svc.url, requests, 2);
      try {
        const out = await tms(['quarantine', '--project', 'CLI', '--url', proxy.url, '--format', 'json']);
        expect(requests.slice(0, 3)).toEqual(Array(3).fill('GET /api/projects?key=CLI'));
        expect(out.stderr).toContain('503');
        expect(out.stderr).toContain('retrying in');
        // Past the retries: the answer of a service with a quarantine list, or the one of a service without.
        expect(out.code).toBe(hasQuarantine ? 0 : 2);
      } finally {
        await proxy.close();
      }
    });

    it('exits 3 when nothing answers, after its bounded retries, without the token in the message', async () => {
      const port = await freePort();
      const out = await tms(['summary', '--run', '1', '--url', `http://u:${token}@127.0.0.1:${port}/tms`], {
        TMS_RETRY_SECONDS: '1',
      });
      expect(out.code).toBe(3);
      expect(out.stderr).toContain('ECONNREFUSED');
      expect(out.stderr.trimEnd().split('\n').at(-1)).toMatch(
        new RegExp(
          `^tms: The service at http://127\\.0\\.0\\.1:${port} is unreachable .*after \\d+ attempts? in 1 s$`,
        ),
      );
    });
  });

  (hasQuarantine ? it : it.skip)(
    'prints the quarantined tests as names, or as one regular expression',
    async () => {
      const names = ['adds 1+1 (fast)', 'sorts [a|b] $x', 'plain name'];
      writeFileSync(join(work, 'quarantine.xml'), JUNIT('q', [...names, 'stays in'].map(pass).join('\n')));
      expect((await tms(['import', 'quarantine.xml', '--project', 'CLI'])).code).toBe(0);
      for (const name of names) {
        const test = (await api(`/api/projects/${projectId}/tests`).query({ q: name }).expect(200)).body
          .content[0];
        await request(svc.url)
          .put(`/api/projects/${projectId}/tests/${test.id}/quarantine`)
          .set('Authorization', `Bearer ${admin}`)
          .send({ reason: 'flaky on CI' })
          .expect(200);
      }
      const grep = await tms(['quarantine', '--project', 'CLI', '--format', 'grep']);
      expect(grep.code).toBe(0);
      const lines = grep.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      const pattern = new RegExp(lines[0]);
      for (const name of names) {
        expect(pattern.test(`q ${name}`)).toBe(true);
      }
      expect(pattern.test('stays in')).toBe(false);
      expect(pattern.test('adds 1+11 fast')).toBe(false);
      // A name is matched whole (or after a describe block's name), not inside another.
      expect(pattern.test('plain names')).toBe(false);
      expect(pattern.test('plain name either')).toBe(false);
      expect(pattern.test('the plain name, again')).toBe(false);
      const plain = await tms(['quarantine', '--project', String(projectId)]);
      expect(plain.stdout.trimEnd().split('\n').sort()).toEqual([...names].sort());
    },
  );
});

/**
 * An HTTP proxy in front of the service that notes each request ("GET /path?query") and answers the first
 * `unavailable` of them with 503 itself.
 */
async function countingProxy(
  target: string,
  requests: string[],
  unavailable = 0,
): Promise<{ url: string; close: () => Promise<void> }> {
  const to = new URL(target);
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (requests.length <= unavailable) {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 503, error: 'Service Unavailable', message: 'Starting up' }));
      return;
    }
    const forward = http.request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
