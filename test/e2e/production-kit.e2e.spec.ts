import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { parse } from 'yaml';
import { RunningApp, startApp } from '../support/app.js';
import { login } from '../support/http.js';
import { Scratch } from '../support/scratch.js';

const ROOT = process.cwd();
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The SVC_* variables the configuration reads: the properties of its schema class. */
function schemaVariables(): Set<string> {
  return new Set(
    [...read('src/config/env.schema.ts').matchAll(/^\s+(SVC_[A-Z0-9_]+)\??:/gm)].map((m) => m[1]),
  );
}

interface ComposeService {
  environment?: Record<string, string>;
  healthcheck?: { test: unknown };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
}

/** docker-compose.yml as Compose reads it (with the `<<: *app` merge key). */
function compose(): { services: Record<string, ComposeService> } {
  return parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, ComposeService> };
}

/** Runs `command` through the shell in `cwd`; resolves with its exit status and its output's tail. */
function sh(command: string, cwd: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], {
      cwd,
      env: { ...process.env, npm_config_loglevel: 'error' },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    child.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    child.on('close', (status) => resolve({ status, output }));
  });
}

describe('The production kit: npm, the Dockerfile, docker-compose.yml, Prometheus and Grafana', () => {
  const scratch = new Scratch();
  afterAll(() => scratch.cleanup());

  it('npm runs here without a warning about the project configuration', () => {
    const run = spawnSync('npm', ['config', 'get', 'registry'], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stderr).not.toMatch(/npm warn/i);
  });

  it("argon2's addon hashes under this machine's Node, built from source where the prebuilt one crashes", () => {
    // The postinstall script, run again: it finds every Node working and leaves the addon alone.
    const check = spawnSync(process.execPath, ['scripts/argon2-check.mjs'], { cwd: ROOT, encoding: 'utf8' });
    expect([check.status, check.stdout]).toEqual([0, '']);
    for (const node of ['/usr/bin/node', process.execPath]) {
      const hash = spawnSync(
        node,
        ['-e', "require('argon2').hash('x').then((h) => process.stdout.write(h.slice(0, 9)))"],
        {
          cwd: ROOT,
          encoding: 'utf8',
        },
      );
      expect([node, hash.status, hash.stdout]).toEqual([node, 0, '$argon2id']);
    }
  });

  it("the Dockerfile's installs succeed on a copy of the lock file", async () => {
    const dockerfile = read('Dockerfile');
    const installs = [...dockerfile.matchAll(/^RUN (?:--mount=\S+ )*(npm (?:ci|install)\b[^\n]*)$/gm)].map(
      (m) => m[1],
    );
    expect(installs).toEqual(['npm ci --no-audit --no-fund', 'npm ci --omit=dev --no-audit --no-fund']);
    // What each stage copies before its install.
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \.\/(\S*)$/gm)]
      .slice(0, 3)
      .map((m) => m[1].split(' '));
    expect(copied).toEqual([
      ['package.json', 'package-lock.json'],
      ['web/package.json'],
      ['scripts/argon2-check.mjs'],
    ]);
    const outcomes = await Promise.all(
      installs.map((command) => {
        const dir = scratch.dir('tms-docker-install-');
        for (const file of [
          'package.json',
          'package-lock.json',
          'web/package.json',
          'scripts/argon2-check.mjs',
        ]) {
          mkdirSync(join(dir, file, '..'), { recursive: true });
          cpSync(join(ROOT, file), join(dir, file));
        }
        return sh(command, dir).then((outcome) => ({ command, ...outcome }));
      }),
    );
    for (const { command, status, output } of outcomes) {
      expect([command, status, status === 0 ? '' : output]).toEqual([command, 0, '']);
    }
  }, 300_000);

  it('docker-compose.yml: every service has a healthcheck, and every SVC_ variable it sets is one the service reads', () => {
    const { services } = compose();
    expect(Object.keys(services).sort()).toEqual(
      [
        'app1',
        'app2',
        'grafana',
        'lb',
        'mailpit',
        'openldap',
        'postgres',
        'prometheus',
        'rabbitmq',
        'redis',
      ].sort(),
    );
    for (const [name, service] of Object.entries(services)) {
      expect([name, service.healthcheck?.test]).toEqual([name, expect.anything()]);
    }
    const known = schemaVariables();
    const documented = new Set(
      [...read('.env.example').matchAll(/^#?\s?(SVC_[A-Z0-9_]+)=/gm)].map((m) => m[1]),
    );
    const set = Object.keys(services.app1.environment ?? {}).filter((v) => v.startsWith('SVC_'));
    expect(set.length).toBeGreaterThan(15);
    expect(set.filter((v) => !known.has(v))).toEqual([]);
    expect(set.filter((v) => !documented.has(v))).toEqual([]);
    expect(read('docker-compose.yml')).not.toMatch(/later releases|ignored today/);
  });

  it('docker-compose.yml: the replicas share the database, key-value store and broker, wait for them, and relay over STOMP', () => {
    const { services } = compose();
    const [one, two] = [services.app1.environment!, services.app2.environment!];
    for (const variable of [
      'SVC_DB_URL',
      'SVC_KVSTORE_URL',
      'SVC_BROKER_AMQP_URL',
      'SVC_BROKER_STOMP_HOST',
      'SVC_JWT_SECRET',
    ]) {
      expect([variable, one[variable]]).toEqual([variable, expect.any(String)]);
      expect([variable, two[variable]]).toEqual([variable, one[variable]]);
    }
    expect(one.SVC_DB_URL).toMatch(/@postgres:5432\//);
    expect(one.SVC_KVSTORE_URL).toMatch(/^redis:\/\/redis:6379/);
    expect(one.SVC_BROKER_AMQP_URL).toMatch(/@rabbitmq:5672/);
    expect([one.SVC_BROKER_STOMP_HOST, one.SVC_BROKER_STOMP_PORT]).toEqual(['rabbitmq', '61613']);
    for (const backing of ['postgres', 'redis', 'rabbitmq', 'mailpit', 'openldap']) {
      expect([backing, services.app1.depends_on?.[backing]?.condition]).toEqual([backing, 'service_healthy']);
    }
    expect(read('docker/rabbitmq/enabled_plugins')).toMatch(/\brabbitmq_stomp\b/);
    expect(services.rabbitmq.volumes).toContain(
      './docker/rabbitmq/enabled_plugins:/etc/rabbitmq/enabled_plugins:ro',
    );
    expect(JSON.stringify(services.rabbitmq.healthcheck?.test)).toContain('check_port_listener 61613');
  });

  it('the balancer proxies /ws with the WebSocket upgrade, and keeps /metrics private', () => {
    const nginx = read('docker/nginx.conf');
    expect(nginx).toMatch(/map \$http_upgrade \$connection_upgrade/);
    expect(nginx).toMatch(/proxy_http_version 1\.1;/);
    expect(nginx).toMatch(/proxy_set_header Upgrade \$http_upgrade;/);
    expect(nginx).toMatch(/proxy_set_header Connection \$connection_upgrade;/);
    expect(nginx).toMatch(/location \/ws \{[^}]*proxy_pass http:\/\/tms;/);
    expect(nginx).toMatch(/location = \/metrics \{\s*return 404;/);
  });

  describe('Prometheus and Grafana', () => {
    let svc: RunningApp;
    beforeAll(async () => {
      svc = await startApp();
    });
    afterAll(() => svc.close());

    it('Prometheus scrapes each replica, and every metric the dashboard charts is one the service exports', async () => {
      const prometheus = parse(read('docker/prometheus.yml')) as {
        scrape_configs: {
          job_name: string;
          metrics_path?: string;
          static_configs: { targets: string[] }[];
        }[];
      };
      const tms = prometheus.scrape_configs.find((c) => c.job_name === 'tms')!;
      expect(tms.metrics_path).toBe('/metrics');
      expect(tms.static_configs.flatMap((c) => c.targets)).toEqual(['app1:8080', 'app2:8080']);

      // Some traffic first, so that labelled series exist: a failed sign-in, results stored.
      await request(svc.url)
        .post('/api/auth/login')
        .send({ username: 'nobody@example.com', password: 'wrong password 1' })
        .expect(401);
      const { accessToken } = await login(svc.url);
      const project = await request(svc.url)
        .post('/api/projects')
        .set('Authorization', `Bearer ${accessToken}`)
        .send({ key: 'MET', name: 'Metrics' });
      const run = await request(svc.url)
        .post(`/api/projects/${project.body.id}/runs`)
        .set('Authorization', `Bearer ${accessToken}`)
        .send({ name: 'r' });
      await request(svc.url)
        .post(`/api/runs/${run.body.id}/results`)
        .set('Authorization', `Bearer ${accessToken}`)
        .send({
          results: [
            { name: 't', status: 'PASSED' },
            { name: 'u', status: 'FAILED' },
          ],
        })
        .expect(201);
      const exported = (await request(svc.url).get('/metrics').expect(200)).text;
      expect(exported).toMatch(/^tms_results_stored_total 2$/m);
      expect(exported).toMatch(/^tms_login_failures_total\{reason="unknown user"\} 1$/m);
      expect(exported).toMatch(/^tms_ingest_queue_depth \d+$/m);
      expect(exported).toMatch(/^tms_ws_connections 0$/m);

      const dashboard = JSON.parse(read('docker/grafana/dashboards/tms.json')) as {
        uid: string;
        panels: { title: string; datasource: { uid: string }; targets: { expr: string }[] }[];
      };
      const names = new Set(
        dashboard.panels.flatMap((p) => p.targets.flatMap((t) => t.expr.match(/\btms_[a-z0-9_]+/g) ?? [])),
      );
      expect(names.size).toBeGreaterThanOrEqual(12);
      // The webhook sender's panel (issue #39): deliveries by result and the outbox's backlog.
      expect([...names]).toEqual(
        expect.arrayContaining(['tms_webhook_deliveries_total', 'tms_webhook_outbox_due']),
      );
      // Declared (a labelled counter has no sample before its first increment), a histogram under its base name.
      const declared = new Set([...exported.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
      for (const name of names) {
        const base = name.replace(/_(bucket|count|sum)$/, '');
        expect([name, declared.has(name) || declared.has(base)]).toEqual([name, true]);
      }
      const datasource = parse(read('docker/grafana/provisioning/datasources/prometheus.yml')) as {
        datasources: { uid: string; url: string }[];
      };
      expect(datasource.datasources[0]).toEqual(
        expect.objectContaining({ uid: 'prometheus', url: 'http://prometheus:9090' }),
      );
      expect(new Set(dashboard.panels.map((p) => p.datasource.uid))).toEqual(new Set(['prometheus']));
      const titles = dashboard.panels.map((p) => p.title).join(' | ');
      for (const topic of [
        'Requests per second',
        'latency',
        'Login failures',
        'rate-limit',
        'Results stored',
        'ingest queue',
        'Mail sent and failed',
        'breaker',
        'WebSocket',
        'Webhook deliveries',
      ]) {
        expect(titles).toContain(topic);
      }
    });
  });
});
