import { jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as theirParse } from 'test-results-parser';
import { createReportParser } from './parse-report.js';
import type { ParsedResult, ReportFormat } from './report-parser.js';
import { elementsOf } from '../../../test/support/report-corpus.js';

/**
 * Our counts against test-results-parser 0.4.6 (npm), an independent implementation, on both corpora.
 *
 * Compared per test case, from its `suites[].cases[].status`: its top-level totals for JUnit and TestNG are the
 * file's declared summary attributes, which MANIFEST.md shows disagree with the content of many files. It has no
 * broken status: JUnit <error> and NUnit Error cases come out as FAIL or ERROR, so its FAIL + ERROR is compared
 * with our FAILED + BROKEN. It does not read CTRF.
 */

const repoRoot = join(import.meta.dirname, '..', '..', '..');
const CORPORA = [
  join(repoRoot, '..', 'shared', 'fixtures', 'reports'),
  join(repoRoot, 'test', 'fixtures', 'reports'),
];

const FORMATS: Record<string, [ReportFormat, string]> = {
  'junit-xml': ['junit', 'junit'],
  'testng-xml': ['testng', 'testng'],
  'nunit2-xml': ['nunit', 'nunit'],
  'nunit3-xml': ['nunit', 'nunit'],
  'xunit-net-xml': ['xunit', 'xunit'],
  trx: ['trx', 'mstest'],
  'cucumber-json': ['cucumber', 'cucumber'],
};

const NESTED_SUITES =
  'it reads only <testcase> elements directly inside the first level of <testsuite>; these sit in nested ones';
const PENDING =
  'it counts a scenario with a "pending" or "undefined" step as FAIL (its parseStatus maps every step status but passed and skipped to FAIL)';
const BESIDE_PARAMETERIZED =
  'a TestFixture that holds test-cases beside a nested ParameterizedMethod test-suite loses those test-cases (it reads the nested suite only)';
const RETRIED =
  'test-methods with retried="true" get the status RETRY, which is neither passed, failed nor skipped';

/** The files on which test-results-parser is wrong, each with the element that shows it. */
const THEY_ARE_WRONG: Record<string, string> = {
  'cucumber/cucumber-json-converter__cucumber-js-7.3.2__one-pending-scenario.json': PENDING,
  'cucumber/cucumber-json-converter__cucumber-js-7.3.2__undefined-background-with-two-scenarios.json':
    PENDING,
  'cucumber/cucumber-json-converter__cucumber-ruby-7.1.0__failing-passing-pending-scenarios.json': PENDING,
  'cucumber/cucumber-json-converter__cucumber-ruby-7.1.0__scenario-outline.json': PENDING,
  'cucumber/cucumber-js-13.json': PENDING,
  'cucumber/cucumber-json-converter__cucumber-ruby-7.1.0__failing-after-step-hook.json':
    'the failed AfterStep hook in each step\'s "after" array is not looked at, so the scenarios pass',
  'cucumber/cucumber-ruby-style-background-hooks.json':
    'every element of "type": "background" is counted as a test case',
  'junit/dorny-test-reporter__phpcheckstyle-phpunit.xml': NESTED_SUITES,
  'junit/jenkins-junit-plugin__junit-report-nested-testsuites.xml': NESTED_SUITES,
  'junit/jenkins-junit-plugin__junit-report-6700.xml':
    'a suite-level <error> in a suite without test cases (a failed class setup) is no test case to it; we import it as one BROKEN test',
  'junit/jenkins-xunit-plugin__junit-testcase3-input.xml': NESTED_SUITES,
  'junit/jenkins-xunit-plugin__phpunit-testcase3-input.xml': NESTED_SUITES,
  'junit/mikepenz-action-junit-report__nested-junit.xml': NESTED_SUITES,
  'junit/phpunit-9.6.xml': NESTED_SUITES,
  'nunit2/jenkins-nunit-plugin__issue-5673.xml':
    'its test-suite elements have no type attribute, so no test-case is read',
  'nunit/nunit-2.2-executed-success.xml':
    'its test-suite elements have no type attribute, so no test-case is read',
  'nunit2/jenkins-xunit-plugin__nunit-testcase10-input.xml':
    'test-cases inside <test-suite type="Fixture"> are not read',
  'nunit2/jenkins-xunit-plugin__nunit-testcase15-input.xml':
    'test-cases inside <test-suite type="TestCollection"> are not read',
  'nunit3/jenkins-nunit-plugin__NUnit-issue50162.xml': BESIDE_PARAMETERIZED,
  'nunit3/jenkins-xunit-plugin__nunit3-testcase4-input.xml': BESIDE_PARAMETERIZED,
  'nunit3/jenkins-xunit-plugin__nunit3-testcase5-input.xml': BESIDE_PARAMETERIZED,
  'nunit/nunit-3.16-labels.xml':
    'result="Warning" (WarnsOnLargeCart) gets no status at all, and label="Invalid" (UsesConfiguredTax) is counted as skipped',
  'testng/trr-parser__multiple-suites-retries.xml': RETRIED,
  'testng/testng-7-retries-config.xml': RETRIED,
  'trx/jenkins-mstest-plugin__JENKINS-25533+19384.trx':
    'the <TestResultAggregation> of an ordered test is not read (UnitTestResult only)',
  'trx/jenkins-mstest-plugin__kozl-unit-tests-missing.trx':
    'a <UnitTestResult> without an outcome attribute gets no status',
  'trx/vstest-outcomes.trx': 'outcome="Timeout", "Aborted" and "Inconclusive" get no status',
  'xunit/enricomi-publish-unit-test-result-action__fixie.xml':
    'an <assemblies> without a timestamp attribute makes it throw',
  'xunit/jenkins-xunit-plugin__xunitdotnet-testcase1-input.xml':
    'an <assemblies> without a timestamp attribute makes it throw',
  'xunit/enricomi-publish-unit-test-result-action__pickles.xml':
    'the legacy xUnit.net v1 root <assembly> is not read',
  'xunit/xunit-2.9-v2.xml': 'result="NotRun" (Shop.Tests.ReportTests.Exports) is counted as passed',
};

interface Counts {
  total: number;
  passed: number;
  failedOrBroken: number;
  skipped: number;
}

function ours(format: ReportFormat, path: string): Counts {
  const counts: Counts = { total: 0, passed: 0, failedOrBroken: 0, skipped: 0 };
  const results: ParsedResult[] = [];
  const sut = createReportParser(format, { result: (r) => results.push(r), warning: () => undefined });
  sut.write(readFileSync(path));
  sut.end();
  for (const { status } of elementsOf(format, results)) {
    counts.total++;
    counts[status === 'PASSED' ? 'passed' : status === 'SKIPPED' ? 'skipped' : 'failedOrBroken']++;
  }
  return counts;
}

function theirs(type: string, path: string): Counts | string {
  try {
    const counts: Counts = { total: 0, passed: 0, failedOrBroken: 0, skipped: 0 };
    for (const suite of theirParse({ type, files: [path] }).suites) {
      for (const { status } of suite.cases) {
        counts.total++;
        if (status === 'PASS') {
          counts.passed++;
        } else if (status === 'FAIL' || status === 'ERROR') {
          counts.failedOrBroken++;
        } else if (status === 'SKIP') {
          counts.skipped++;
        }
      }
    }
    return counts;
  } catch (error) {
    return String(error);
  }
}

const files = CORPORA.flatMap((dir) =>
  Object.entries(
    JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Record<string, { format: string }>,
  )
    .filter(([, { format }]) => FORMATS[format] !== undefined)
    .map(([file, { format }]) => ({ file, path: join(dir, file), format: FORMATS[format] })),
);

describe('cross-check with test-results-parser', () => {
  beforeEach(() => {
    // It reports files without suites on the console.
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('knows every file it lists as wrong', () => {
    const known = new Set(files.map(({ file }) => file));

    expect(Object.keys(THEY_ARE_WRONG).filter((file) => !known.has(file))).toEqual([]);
  });

  it.each(files.filter(({ file }) => THEY_ARE_WRONG[file] === undefined))(
    'agrees on $file',
    ({ path, format }) => {
      expect(ours(format[0], path)).toEqual(theirs(format[1], path));
    },
  );

  it.each(files.filter(({ file }) => THEY_ARE_WRONG[file] !== undefined))(
    'still differs on $file',
    ({ file, path, format }) => {
      // If it no longer differs, test-results-parser was fixed: take the file out of THEY_ARE_WRONG.
      expect({ file, counts: ours(format[0], path) }).not.toEqual({ file, counts: theirs(format[1], path) });
    },
  );
});
