import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReportFormat } from '../../src/import/parsers/report-parser.js';
import type { RunCounts } from '../../src/results/result-input.js';

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

export interface Expected extends RunCounts {
  /** The file type, as in FORMAT_OF. */
  format: string;
}

/** A corpus's files with their expected counts: [relative path, expected, absolute path]. */
export function corpus(dir: string): (readonly [string, Expected, string])[] {
  return Object.entries(
    JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Record<string, Expected>,
  ).map(([file, expected]) => [file, expected, join(dir, file)] as const);
}
