import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReportFormat } from '../../src/import/parsers/report-parser.js';
import type { StatusCounts } from '../../src/results/result-input.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Real reports from public repositories (shared/ lies beside the repository, in CI too) and our own corpus. */
export const SHARED_REPORTS = join(ROOT, '..', 'shared', 'fixtures', 'reports');
export const OWN_REPORTS = join(ROOT, 'test', 'fixtures', 'reports');

/** expected.json names formats by file type; the import names them by the path segment. */
export const FORMAT_OF: Record<string, ReportFormat> = {
  'junit-xml': 'junit',
  'testng-xml': 'testng',
  'nunit2-xml': 'nunit',
  'nunit3-xml': 'nunit',
  'xunit-net-xml': 'xunit',
  trx: 'trx',
  'cucumber-json': 'cucumber',
  'ctrf-json': 'ctrf',
};

export interface Expected extends StatusCounts {
  /** The file type, as in FORMAT_OF. */
  format: string;
}

/**
 * Where our parsers read more than expected.json's elements, by design: a JUnit suite without a test case but with a
 * suite-level <error> is one BROKEN test named after the suite (as CI servers show a failed class setup).
 */
const AMENDED: Record<string, Partial<Expected>> = {
  'junit/jenkins-junit-plugin__junit-report-6700.xml': { total: 1, broken: 1 },
  'junit/jenkins-junit-plugin__junit-report-nested-testsuites.xml': { total: 3, broken: 1 },
};

/** A corpus's files with their expected counts: [relative path, expected, absolute path]. */
export function corpus(dir: string): (readonly [string, Expected, string])[] {
  return Object.entries(
    JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Record<string, Expected>,
  ).map(([file, expected]) => [file, { ...expected, ...AMENDED[file] }, join(dir, file)] as const);
}

/**
 * What an import counts where a report lists attempts of one test as elements of their own (TestNG `retried`,
 * cucumber --retry): tests, by their last attempt (API.md, "Attempts"), where expected.json counts the elements the
 * parsers read. The shared corpus's numbers are the de-duplicated ones of its MANIFEST.md.
 */
const OUTCOMES: Record<string, StatusCounts> = {
  'cucumber/cucumber-json-converter__cucumber-ruby-7.1.0__failing-after-step-hook.json': {
    total: 1,
    passed: 0,
    failed: 1,
    broken: 0,
    skipped: 0,
  },
  'cucumber/cucumber-json-converter__cucumber-ruby-7.1.0__failing-passing-pending-scenarios.json': {
    total: 3,
    passed: 1,
    failed: 1,
    broken: 0,
    skipped: 1,
  },
  'cucumber/cucumber-json-converter__cucumber-ruby-7.1.0__scenario-outline.json': {
    total: 3,
    passed: 1,
    failed: 1,
    broken: 0,
    skipped: 1,
  },
  'cucumber/cucumber-json-converter__cucumber-ruby-7.1.0__flaky-scenario.json': {
    total: 1,
    passed: 1,
    failed: 0,
    broken: 0,
    skipped: 0,
  },
  'testng/trr-parser__multiple-suites-retries.xml': { total: 6, passed: 4, failed: 2, broken: 0, skipped: 0 },
  // Our own corpus: a retried attempt (SKIP) and a cucumber --retry row (failed twice).
  'testng/testng-7-retries-config.xml': { total: 7, passed: 3, failed: 2, broken: 0, skipped: 2 },
  'cucumber/cucumber-ruby-style-background-hooks.json': {
    total: 6,
    passed: 2,
    failed: 3,
    broken: 0,
    skipped: 1,
  },
};

/** The counts an import of `file` answers: its tests' outcomes (see OUTCOMES), from `expected` where they are the same. */
export function importedCounts(file: string, expected: Expected): StatusCounts {
  const { format: _format, ...counts } = expected;
  return OUTCOMES[file] ?? counts;
}

/**
 * The report's own elements among a parser's results: JUnit (Surefire's rerun elements) and CTRF (`retries`) write
 * a test's earlier attempts out before its own result, each with the same suite and name and a lower retry; the
 * corpus counts the test once, by its own result. (TestNG and cucumber write each attempt as an element, counted as
 * such.)
 */
export function elementsOf<T extends { name: string; suite?: string; retry?: number }>(
  format: ReportFormat,
  results: T[],
): T[] {
  if (format !== 'junit' && format !== 'ctrf') {
    return results;
  }
  return results.filter((r, i) => {
    const next = results[i + 1];
    return !(next && next.name === r.name && next.suite === r.suite && (next.retry ?? 0) > (r.retry ?? 0));
  });
}
