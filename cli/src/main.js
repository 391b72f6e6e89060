import { createReadStream, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream';
import { parseArgs } from 'node:util';
import { Client, errorMessage, loadConfig } from './client.js';
import { ApiError, CliError, EXIT, usageError } from './errors.js';
import { collectReports, contentTypeOf, dispositionOf, zipReports } from './files.js';
import { formatBytes, note, print, scrub, scrubDeep } from './output.js';
import { Progress } from './progress.js';
import { render, renderGate } from './render.js';
import { gatherSummary, getGate, getRun } from './summary.js';

const VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
const REPORT_FORMATS = ['auto', 'junit', 'testng', 'nunit', 'xunit', 'trx', 'cucumber', 'ctrf'];
const SUMMARY_FORMATS = ['text', 'markdown', 'json'];
const QUARANTINE_FORMATS = ['names', 'json', 'grep'];
/** How long a finished run's PENDING gate is asked again (it is evaluated as the run finishes). */
const DEFAULT_GATE_WAIT_SECONDS = 30;

const HELP = `tms ${VERSION}: the test management service's command for CI

Usage:
  tms import <file|dir|glob>... --project <KEY|id> [--format auto] [--run-name N] [--attr k=v]...
             [--branch B] [--commit C] [--env E] [--stream S] [--gate] [--summary text|markdown|json]
  tms gate --run <id> [--format text|json]
  tms summary --run <id> [--format text|markdown|json]
  tms quarantine --project <KEY|id> [--format names|json|grep]

import      uploads the reports as one run (a directory or several files go up as one zip) and prints the
            run's summary; --gate exits 1 when the run's quality gate FAILED
gate        prints a run's gate and its conditions; exits 1 unless PASSED or OFF
summary     prints a run's summary: counts, pass rate, gate, new failures, flaky and quarantined tests, link
quarantine  prints the project's quarantined tests: names (one a line), json, or grep (one regular expression)

Options for every command:
  --url <url>      the service's address (default: $TMS_URL)
  --token <token>  an API token (default: $TMS_TOKEN; prefer the variable, a command line is visible to others)
  -h, --help       this text
  --version        the version

Environment: TMS_URL, TMS_TOKEN; TMS_RETRY_SECONDS (default 60): how long a 502/503/504 or a refused or
dropped connection is retried, with exponential backoff; TMS_GATE_WAIT_SECONDS (default 30): how long a
finished run's PENDING gate is waited for.

Exit codes: 0 done; 1 the gate FAILED (import --gate, gate); 2 bad usage, bad input, or a request the service
refused (its message shown); 3 the service unreachable after retries, or failing (5xx).
`;

/** @type {Record<string, NonNullable<import('node:util').ParseArgsConfig['options']>[string]>} */
const COMMON = {
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

/** @type {Record<string, Record<string, NonNullable<import('node:util').ParseArgsConfig['options']>[string]>>} */
const OPTIONS = {
  import: {
    project: { type: 'string' },
    format: { type: 'string' },
    'run-name': { type: 'string' },
    attr: { type: 'string', multiple: true },
    branch: { type: 'string' },
    commit: { type: 'string' },
    env: { type: 'string' },
    stream: { type: 'string' },
    gate: { type: 'boolean' },
    summary: { type: 'string' },
  },
  gate: { run: { type: 'string' }, format: { type: 'string' } },
  summary: { run: { type: 'string' }, format: { type: 'string' } },
  quarantine: { project: { type: 'string' }, format: { type: 'string' } },
};

/**
 * Runs the command line `argv` (without node and the script) and answers the exit code; never throws.
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {Promise<number>}
 */
export async function main(argv, env = process.env) {
  try {
    return await dispatch(argv, env);
  } catch (caught) {
    const error = authProblem(caught);
    if (error instanceof CliError) {
      note(`tms: ${oneLine(error.message)}`);
      return error.exitCode;
    }
    // Not one of ours: still one line, still without the token.
    note(`tms: ${oneLine(error instanceof Error ? `${error.name}: ${error.message}` : String(error))}`);
    return EXIT.UNREACHABLE;
  }
}

/** @param {string} text */
const oneLine = (text) =>
  scrub(text)
    .replace(/\s*[\r\n]+\s*/g, ' ')
    .trim();

/**
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 */
async function dispatch(argv, env) {
  const [command, ...rest] = argv;
  if (!command || command === '-h' || command === '--help' || command === 'help') {
    print(HELP);
    return command ? EXIT.OK : EXIT.USAGE;
  }
  if (command === '--version' || command === '-v') {
    print(VERSION);
    return EXIT.OK;
  }
  const options = OPTIONS[command];
  if (!options) {
    throw usageError(
      `Unknown command ${JSON.stringify(command)}: use import, gate, summary or quarantine (tms --help)`,
    );
  }
  /** @type {{values: Record<string, any>, positionals: string[]}} */
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...COMMON, ...options },
      allowPositionals: command === 'import',
      strict: true,
    });
  } catch (error) {
    throw usageError(`${error instanceof Error ? error.message : String(error)} (tms --help)`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    print(HELP);
    return EXIT.OK;
  }
  const client = new Client(loadConfig({ url: values.url, token: values.token }, env));
  const gateWait = seconds(env.TMS_GATE_WAIT_SECONDS, 'TMS_GATE_WAIT_SECONDS', DEFAULT_GATE_WAIT_SECONDS);
  switch (command) {
    case 'import':
      return importReports(client, positionals, values, gateWait);
    case 'gate':
      return gateCommand(
        client,
        runIdOf(values.run),
        oneOf(values.format, ['text', 'json'], 'text', '--format'),
        gateWait,
      );
    case 'summary': {
      const format = oneOf(values.format, SUMMARY_FORMATS, 'text', '--format');
      const summary = await gatherSummary(client, runIdOf(values.run), { gateWaitSeconds: gateWait });
      print(render(summary, format));
      return EXIT.OK;
    }
    default:
      return quarantineCommand(
        client,
        values.project,
        oneOf(values.format, QUARANTINE_FORMATS, 'names', '--format'),
      );
  }
}

/**
 * @param {string | undefined} raw
 * @param {string} name
 * @param {number} fallback
 */
function seconds(raw, name, fallback) {
  if (raw === undefined || raw === '') {
    return fallback;
  }
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    throw usageError(`${name} must be a number of seconds, not ${JSON.stringify(raw)}`);
  }
  return value;
}

/**
 * @param {string | undefined} value
 * @param {string[]} allowed
 * @param {string} fallback
 * @param {string} option
 */
function oneOf(value, allowed, fallback, option) {
  if (value === undefined) {
    return fallback;
  }
  if (!allowed.includes(value)) {
    throw usageError(`${option} must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`);
  }
  return value;
}

/** @param {string | undefined} value */
function runIdOf(value) {
  if (value === undefined) {
    throw usageError('--run <id> is needed (tms --help)');
  }
  if (!/^\d{1,18}$/.test(value)) {
    throw usageError(`--run must be a run id (a number), not ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/**
 * The project named by its key (as the service lists it, `GET /api/projects?key=`) or its id. A key is tried first:
 * a key may be all digits. A service without the `key` filter (400) has its project list read instead.
 * @param {Client} client
 * @param {string | undefined} ref
 * @returns {Promise<{id: number, key: string, name: string}>}
 */
export async function resolveProject(client, ref) {
  if (ref === undefined || ref.trim() === '') {
    throw usageError('--project <KEY|id> is needed (tms --help)');
  }
  const key = ref.trim().toUpperCase();
  if (/^[A-Z0-9_]{2,32}$/.test(key)) {
    /** @type {any[]} */
    let projects;
    try {
      projects = (await client.json('GET', 'api/projects', { query: { key } })).content;
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 400)) {
        throw error;
      }
      projects = (await client.all('api/projects')).items;
    }
    const found = projects.find((p) => p.key === key);
    if (found) {
      return found;
    }
  }
  if (/^\d{1,18}$/.test(ref.trim())) {
    const found = await client.optional(`api/projects/${ref.trim()}`);
    if (found) {
      return found;
    }
  }
  throw usageError(
    `Unknown project ${JSON.stringify(ref)}: no project with this key or id is visible with this token`,
  );
}

/** A refused token said as such, wherever it was refused. @param {unknown} error */
function authProblem(error) {
  if (error instanceof ApiError && error.status === 401) {
    return usageError(
      `The service refused the API token (401 ${error.serverMessage}): check TMS_TOKEN or --token`,
    );
  }
  return error;
}

/**
 * `tms import`: the reports up as one run, then the run's summary; with --gate, exit 1 when its gate FAILED.
 * @param {Client} client
 * @param {string[]} paths
 * @param {Record<string, any>} values
 * @param {number} gateWait
 */
async function importReports(client, paths, values, gateWait) {
  const format = oneOf(values.format, REPORT_FORMATS, 'auto', '--format');
  const summaryFormat = oneOf(values.summary, SUMMARY_FORMATS, 'text', '--summary');
  if (!paths.length) {
    throw usageError('No reports given: name files, directories or glob patterns (tms --help)');
  }
  /** @type {Record<string, string>} */
  const attributes = {};
  for (const pair of values.attr ?? []) {
    const at = pair.indexOf('=');
    if (at < 1) {
      throw usageError(`--attr must be key=value, not ${JSON.stringify(pair)}`);
    }
    attributes[pair.slice(0, at).trim()] = pair.slice(at + 1);
  }
  const files = await collectReports(paths);
  const project = await resolveProject(client, values.project);
  const single = files.length === 1 && !(await isDirectoryArg(paths));
  const upload = single
    ? { path: files[0].path, size: files[0].size, name: files[0].name, cleanup: async () => {} }
    : { ...(await zipReports(files)), name: `${files.length} reports` };
  try {
    note(
      single
        ? `Uploading ${upload.name} (${formatBytes(upload.size)}) to project ${project.key}`
        : `Uploading ${files.length} file${files.length === 1 ? '' : 's'} as one zip (${formatBytes(upload.size)}) to project ${project.key}`,
    );
    const progress = new Progress(single ? upload.name : 'reports.zip', upload.size);
    const res = await client.send('POST', `api/import/${format}`, {
      query: {
        projectId: project.id,
        runName: values['run-name'],
        attributes: Object.keys(attributes).length ? JSON.stringify(attributes) : undefined,
        branch: values.branch,
        commit: values.commit,
        env: values.env,
        stream: values.stream,
      },
      headers: {
        'content-type': single ? contentTypeOf(upload.name) : 'application/zip',
        'content-disposition': dispositionOf(single ? upload.name : 'reports.zip'),
      },
      body: () => {
        const counter = progress.counter();
        pipeline(createReadStream(upload.path), counter, () => {});
        return { body: counter, length: upload.size };
      },
      noTimeout: true,
    });
    progress.done();
    if (!res.ok) {
      const message = await errorMessage(res);
      throw new ApiError(res.status, message, `The import into ${project.key} was refused`);
    }
    /** @type {{runId: number, format: string, counts: Record<string, number>, warnings: string[]}} */
    const imported = await res.json();
    for (const warning of imported.warnings ?? []) {
      note(`warning: ${warning}`);
    }
    note(`Imported run ${imported.runId} (${imported.format}): ${client.webUrl(`runs/${imported.runId}`)}`);
    const summary = await gatherSummary(client, imported.runId, {
      gateWaitSeconds: values.gate ? gateWait : 0,
    });
    print(render(summary, summaryFormat));
    if (values.gate) {
      return gateExit(summary.run.id, summary.gate, gateWait);
    }
    return EXIT.OK;
  } finally {
    await upload.cleanup();
  }
}

/**
 * Whether any argument is a directory: then even one report goes up zipped, as the directory's.
 * @param {string[]} paths
 */
async function isDirectoryArg(paths) {
  for (const path of paths) {
    if ((await stat(path).catch(() => undefined))?.isDirectory()) {
      return true;
    }
  }
  return false;
}

/**
 * The exit code a gate means, saying on standard error why it is not 0.
 * @param {number} runId
 * @param {import('./summary.js').Gate | null} gate
 * @param {number} gateWait
 */
function gateExit(runId, gate, gateWait) {
  if (!gate) {
    throw usageError(
      `The service has no quality gate (GET /api/runs/${runId}/gate: 404), so --gate cannot be checked`,
    );
  }
  if (gate.status === 'PASSED' || gate.status === 'OFF') {
    return EXIT.OK;
  }
  note(
    gate.status === 'FAILED'
      ? `Gate FAILED for run ${runId}`
      : `Gate of run ${runId} still ${gate.status} after ${gateWait} s: not passed`,
  );
  return EXIT.GATE_FAILED;
}

/**
 * `tms gate --run <id>`.
 * @param {Client} client
 * @param {number} runId
 * @param {string} format
 * @param {number} gateWait
 */
async function gateCommand(client, runId, format, gateWait) {
  await getRun(client, runId);
  const gate = await getGate(client, runId, gateWait);
  if (!gate) {
    throw usageError(`The service has no quality gate (GET /api/runs/${runId}/gate: 404)`);
  }
  print(format === 'json' ? JSON.stringify(scrubDeep(gate), null, 2) : renderGate(runId, scrubDeep(gate)));
  return gateExit(runId, gate, gateWait);
}

/** A name's control characters as the escapes a regular expression reads (one line of output, whatever the name). */
const CONTROL_ESCAPES = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * One regular expression (for --testNamePattern, grep -E) matching a test's name when it is one of `names`, as text,
 * whole or after a space: a runner such as Jest matches its full name, the describe blocks' names and then the
 * test's ("Cart adds" for a test stored as "adds"). Not a name that merely contains one (`x` is not `ab (x|y)`). On
 * one line: a line break in a name is written as `\n`.
 * @param {string[]} names
 */
export function namesPattern(names) {
  const alternatives = names.map((n) =>
    n
      .replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
      .replace(/[\n\r\t]/g, (c) => CONTROL_ESCAPES[/** @type {'\n' | '\r' | '\t'} */ (c)]),
  );
  return `(^| )(${alternatives.join('|')})$`;
}

/**
 * `tms quarantine --project <KEY|id>`.
 * @param {Client} client
 * @param {string | undefined} ref
 * @param {string} format
 */
async function quarantineCommand(client, ref, format) {
  const project = await resolveProject(client, ref);
  /** @type {{items: any[]} | undefined} */
  let list;
  try {
    list = await client.all(`api/projects/${project.id}/quarantine`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw usageError(
        `The service has no quarantine list (GET /api/projects/${project.id}/quarantine: 404)`,
      );
    }
    throw error;
  }
  const tests = scrubDeep(list.items);
  if (format === 'json') {
    print(JSON.stringify(tests, null, 2));
    return EXIT.OK;
  }
  const names = [...new Set(tests.map((t) => String(t.name)))];
  if (format === 'grep') {
    if (names.length) {
      print(namesPattern(names));
    }
    return EXIT.OK;
  }
  if (names.length) {
    print(names.map((n) => n.replace(/[\r\n]+/g, ' ')).join('\n'));
  }
  return EXIT.OK;
}
