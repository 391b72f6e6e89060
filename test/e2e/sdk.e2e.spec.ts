import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import request from 'supertest';
import ts from 'typescript';
import { ADMIN_EMAIL, ADMIN_PASSWORD, RunningApp, startApp } from '../support/app.js';
import { createTestDatabase } from '../support/database.js';

const ROOT = process.cwd();

/**
 * The SDK users generate: a TypeScript client from the served /v3/api-docs (openapi-typescript and openapi-fetch,
 * as the README shows), a program written against it type-checked, then run against the live service.
 */
const PROGRAM = `
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const [baseUrl, username, password] = process.argv.slice(2);
function fail(what: string, error: unknown): never {
  throw new Error(\`\${what}: \${JSON.stringify(error)}\`);
}

const anonymous = createClient<paths>({ baseUrl });
const signedIn = await anonymous.POST('/api/auth/login', { body: { username, password } });
if (!signedIn.data || !('accessToken' in signedIn.data)) {
  fail('login', signedIn.error);
}
const jwt = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${signedIn.data.accessToken}\` } });
const key = await jwt.POST('/api/users/me/api-keys', { body: { name: 'sdk' } });
const project = await jwt.POST('/api/projects', { body: { key: 'SDK', name: 'Generated client' } });
if (!key.data || !project.data) {
  fail('api key or project', key.error ?? project.error);
}
const ci = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key.data.token}\` } });
const projectId = String(project.data.id);

// V1: a run, results (without \`retry\`: optional in the generated types), finished.
const run = await ci.POST('/api/projects/{projectId}/runs', { params: { path: { projectId } }, body: { name: 'v1 run' } });
if (!run.data) {
  fail('V1 run', run.error);
}
const runId = String(run.data.id);
const added = await ci.POST('/api/runs/{runId}/results', {
  params: { path: { runId } },
  body: { results: [{ name: 'logs in', suite: 'Auth', status: 'PASSED', durationMs: 12 }, { name: 'pays', status: 'FAILED', message: 'boom' }] },
});
await ci.POST('/api/runs/{runId}/finish', { params: { path: { runId } }, body: {} });

// V2: queued; polled until stored.
const uuid = crypto.randomUUID();
await ci.POST('/api/v2/projects/{projectId}/runs', { params: { path: { projectId } }, body: { uuid, name: 'v2 run' } });
await ci.POST('/api/v2/projects/{projectId}/runs/{runUuid}/results', {
  params: { path: { projectId, runUuid: uuid } },
  body: { results: [{ uuid: crypto.randomUUID(), name: 'streams', status: 'PASSED' }] },
});
await ci.POST('/api/v2/projects/{projectId}/runs/{runUuid}/finish', { params: { path: { projectId, runUuid: uuid } }, body: {} });
let v2: { status: string; counts: { total: number } } | undefined;
for (let i = 0; i < 200 && v2?.status !== 'FINISHED'; i++) {
  const polled = await ci.GET('/api/v2/projects/{projectId}/runs/{runUuid}', { params: { path: { projectId, runUuid: uuid } } });
  v2 = polled.data;
  await new Promise((r) => setTimeout(r, 50));
}

// Import: a JUnit file as the raw body.
const junit = '<testsuite name="shop"><testcase classname="Shop" name="lists"/><testcase classname="Shop" name="sells"><failure message="out of stock"/></testcase></testsuite>';
const imported = await ci.POST('/api/import/{format}', {
  params: { path: { format: 'junit' }, query: { projectId, runName: 'imported' } },
  body: junit,
  bodySerializer: (body) => body,
  headers: { 'Content-Type': 'application/xml' },
});
if (!imported.data) {
  fail('import', imported.error);
}

// Read back, and an error body as the client sees it.
const back = await ci.GET('/api/runs/{runId}', { params: { path: { runId } } });
const missing = await ci.GET('/api/runs/{runId}', { params: { path: { runId: '999999999' } } });
console.log(JSON.stringify({
  v1: { ids: added.data?.ids.length, counts: back.data?.counts, status: back.data?.status },
  v2: { status: v2?.status, total: v2?.counts.total },
  imported: { format: imported.data.format, counts: imported.data.counts },
  missing: { status: missing.response.status, error: missing.error },
}));
`;

describe('The SDK users generate from the OpenAPI document', () => {
  let svc: RunningApp;
  let stopDatabase: () => Promise<void>;
  let document: Record<string, unknown> & { paths: Record<string, Record<string, Operation>> };
  const dir = join(ROOT, '.tmp', `sdk-${randomBytes(4).toString('hex')}`);

  beforeAll(async () => {
    const database = await createTestDatabase();
    stopDatabase = () => database.drop();
    svc = await startApp({ SVC_DB_URL: database.url });
    document = (await request(svc.url).get('/v3/api-docs').expect(200)).body;
    mkdirSync(dir, { recursive: true });
  });
  afterAll(async () => {
    await svc?.close();
    await stopDatabase?.();
    rmSync(dir, { recursive: true, force: true });
  });

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ path, method, op })),
    );

  it('names every operation, documents its error responses with the error body, and declares its security', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.length).toBeGreaterThan(60);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => !/^[a-z][A-Za-z0-9]+$/.test(id))).toEqual([]);
    expect(ids).toEqual(
      expect.arrayContaining([
        'login',
        'createProject',
        'addResults',
        'addResultsV2',
        'importReport',
        'compareRuns',
      ]),
    );
    const schemes = (
      document.components as { securitySchemes: Record<string, { type: string; scheme?: string }> }
    ).securitySchemes;
    expect(schemes.bearer).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    for (const { path, method, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      expect([where, Array.isArray(op.security), op.summary?.length ? 'summary' : 'none']).toEqual([
        where,
        true,
        'summary',
      ]);
      const isPublic = op.security!.length === 0;
      if (!isPublic) {
        expect([where, Object.keys(op.responses)]).toEqual([where, expect.arrayContaining(['401'])]);
      }
      if (op.requestBody || op.parameters?.length) {
        expect([where, Object.keys(op.responses)]).toEqual([where, expect.arrayContaining(['400'])]);
      }
      for (const [status, response] of Object.entries(op.responses)) {
        if (status.startsWith('4')) {
          expect([where, status, response.content?.['application/json']?.schema]).toEqual([
            where,
            status,
            { $ref: '#/components/schemas/ErrorBody' },
          ]);
        }
      }
    }
    expect(operations().find(({ path }) => path === '/api/auth/login')!.op.security).toEqual([]);
    expect(document.servers).toEqual([expect.objectContaining({ url: svc.config.http.baseUrl })]);
  });

  it('passes the OpenAPI linter (Redocly, recommended rules) without an error', () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const lint = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', file, '--format=json'],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    );
    const report = JSON.parse(lint.stdout.slice(lint.stdout.indexOf('{'))) as {
      totals: { errors: number };
      problems: { ruleId: string; severity: string; message: string }[];
    };
    expect(
      report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message}`),
    ).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  /** The generated types (schema.d.ts in the scratch folder), written once. */
  let schema: Promise<void> | undefined;
  const writeSchema = () =>
    (schema ??= openapiTS(document as never).then((ast) =>
      writeFileSync(join(dir, 'schema.d.ts'), astToString(ast)),
    ));

  /** What TypeScript finds wrong in `file` (strict, Node's module rules or a bundler's), as `file: message`. */
  function typeErrors(file: string, resolution: 'node' | 'bundler'): string[] {
    const checker = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      ...(resolution === 'node'
        ? { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext }
        : { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler }),
      allowImportingTsExtensions: true,
      skipLibCheck: true,
      types: ['node'],
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    });
    return ts
      .getPreEmitDiagnostics(checker)
      .map(
        (d) =>
          `${d.file?.fileName.split('/').pop() ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      );
  }

  it('generates a typed client that a program type-checks against and runs with: V1, V2, import, read back', async () => {
    await writeSchema();
    const program = join(dir, 'client.ts');
    writeFileSync(program, PROGRAM);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    expect(typeErrors(program, 'node')).toEqual([]);

    // Node 24 runs TypeScript by stripping its types (the `node` the npm scripts run on). Not spawnSync: the
    // service answering it runs in this process.
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--no-warnings', program, svc.url, ADMIN_EMAIL, ADMIN_PASSWORD],
        { cwd: dir },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
    expect([run.status, run.stderr]).toEqual([0, '']);
    expect(JSON.parse(run.stdout)).toEqual({
      v1: { ids: 2, counts: { total: 2, passed: 1, failed: 1, broken: 0, skipped: 0, passedOnRetry: 0, attempts: 2 }, status: 'FINISHED' },
      v2: { status: 'FINISHED', total: 1 },
      imported: { format: 'junit', counts: { total: 2, passed: 1, failed: 1, broken: 0, skipped: 0, passedOnRetry: 0, attempts: 2 } },
      missing: {
        status: 404,
        error: { status: 404, error: 'Not Found', message: 'Run 999999999 not found' },
      },
    });
  }, 60_000);

  it("reads every body the web app reads with the app's own types: each schema fits the app's type for it", async () => {
    await writeSchema();
    // What the server sends must fit what the app expects: a field the app needs and the API does not promise,
    // or a value (an enum member, a null) the app does not allow, is a type error here.
    const file = join(dir, 'web-types.ts');
    const client = relative(dir, join(ROOT, 'web/src/api/client.js'));
    writeFileSync(
      file,
      [
        `import type { components } from './schema.js';`,
        `import type * as App from '${client}';`,
        `type Sent = components['schemas'];`,
        `type Fits<Server, Reader> = [Server] extends [Reader] ? true : { sent: Server; read: Reader };`,
        ...WEB_TYPES.map(
          ([app, schema], i) => `export const fits${i}: Fits<Sent['${schema}'], App.${app}> = true;`,
        ),
      ].join('\n'),
    );
    expect(typeErrors(file, 'bundler')).toEqual([]);
    // Every schema named exists: a renamed DTO fails here, not silently as `any`.
    const schemas = Object.keys((document.components as { schemas: Record<string, unknown> }).schemas);
    expect(WEB_TYPES.filter(([, name]) => !schemas.includes(name))).toEqual([]);
  }, 30_000);
});

/** The web app's type (in web/src/api/client.ts) for each response schema it reads. */
const WEB_TYPES: [app: string, schema: string][] = [
  ['Me', 'MeDto'],
  ['TwoFactorChallenge', 'TwoFactorChallengeDto'],
  ['ApiKey', 'ApiTokenDto'],
  ['CreatedApiKey', 'CreatedApiTokenDto'],
  ['TwoFactorStatus', 'TwoFactorStatusDto'],
  ['Enrolment', 'EnrollmentDto'],
  ['AdminUser', 'AdminUserDto'],
  ['GroupSummary', 'GroupSummaryDto'],
  ['Group', 'GroupDto'],
  ['Group', 'CreatedGroupDto'],
  ['GroupMember', 'GroupMemberDto'],
  ['LatestRun', 'LatestRunDto'],
  ['Project', 'ProjectDto'],
  ['Member', 'ProjectMemberDto'],
  ['TestCase', 'TestCaseDto'],
  ['FailureGroup', 'FailureGroupDto'],
  ['Suite', 'SuiteDto'],
  ['Comparison', 'ComparisonDto'],
  ['TestChange', 'TestChangeDto'],
  ['TrendPoint', 'TrendPointDto'],
  ['RunCounts', 'RunCountsDto'],
  ['Run', 'RunDto'],
  ['Result', 'ResultDto'],
  ['ResultDetail', 'ResultDetailDto'],
  ['HistoryItem', 'HistoryItemDto'],
  ['Attempt', 'AttemptDto'],
  ['HistoryAttempt', 'HistoryAttemptDto'],
  ['Stream', 'StreamDto'],
  ['ProjectSettings', 'ProjectSettingsDto'],
  ['AuditEvent', 'AuditEventDto'],
  ['Subscription', 'SubscriptionDto'],
  ['Page<App.Project>', 'ProjectPage'],
  ['Page<App.Run>', 'RunPage'],
  ['Page<App.Result>', 'ResultPage'],
  ['Page<App.AuditEvent>', 'AuditEventPage'],
];

interface Operation {
  operationId: string;
  summary?: string;
  security?: Record<string, string[]>[];
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
