import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StatusCounts } from '../../results/result-input.js';
import { DETECT_HEAD_BYTES, detectFormat } from './detect.js';
import { createReportParser, parseReport } from './parse-report.js';
import type { ParsedResult, ReportFormat } from './report-parser.js';
import {
  corpus,
  elementsOf,
  type Expected,
  FORMAT_OF,
  OWN_REPORTS,
  SHARED_REPORTS,
} from '../../../test/support/report-corpus.js';

const CORPORA: [string, string][] = [
  ['shared corpus', SHARED_REPORTS],
  ['own corpus', OWN_REPORTS],
];

function expectedOf(dir: string): [string, Expected][] {
  return corpus(dir).map(([file, expected]) => [file, expected]);
}

/** Parses `input` fed in pieces of `chunk` bytes (or as one string), as a request body arrives. */
function parse(
  format: ReportFormat,
  input: Buffer | string,
  chunk = 4096,
): { results: ParsedResult[]; warnings: string[] } {
  const results: ParsedResult[] = [];
  const warnings: string[] = [];
  const sut = createReportParser(format, {
    result: (r) => results.push(r),
    warning: (w) => warnings.push(w),
  });
  if (typeof input === 'string') {
    sut.write(input);
  } else {
    for (let i = 0; i < input.length; i += chunk) {
      sut.write(input.subarray(i, i + chunk));
    }
  }
  sut.end();
  return { results, warnings };
}

function countsOf(results: ParsedResult[]): StatusCounts {
  const counts: StatusCounts = { total: results.length, passed: 0, failed: 0, broken: 0, skipped: 0 };
  for (const { status } of results) {
    counts[
      status === 'PASSED'
        ? 'passed'
        : status === 'FAILED'
          ? 'failed'
          : status === 'BROKEN'
            ? 'broken'
            : 'skipped'
    ]++;
  }
  return counts;
}

describe.each(CORPORA)('the %s', (_corpus, dir) => {
  const entries = expectedOf(dir);

  it('is not empty', () => {
    expect(entries.length).toBeGreaterThan(10);
  });

  it.each(entries)('%s: counts as expected.json says, read in 4 KiB chunks', (file, want) => {
    const format = FORMAT_OF[want.format];
    const { results } = parse(format, readFileSync(join(dir, file)));

    expect(countsOf(elementsOf(format, results))).toEqual({
      total: want.total,
      passed: want.passed,
      failed: want.failed,
      broken: want.broken,
      skipped: want.skipped,
    });
    for (const result of results) {
      expect(result.name.trim()).not.toBe('');
      expect([...result.name].length).toBeLessThanOrEqual(1000);
    }
  });

  it.each(entries)('%s: is detected from its first bytes', (file, want) => {
    const head = readFileSync(join(dir, file)).subarray(0, DETECT_HEAD_BYTES);

    expect(detectFormat(head)).toBe(FORMAT_OF[want.format]);
  });

  it.each(entries)('%s: gives the same results in 7-byte chunks as in one piece', (file, want) => {
    const format = FORMAT_OF[want.format];
    const bytes = readFileSync(join(dir, file));

    const whole = parse(format, bytes, bytes.length);
    const pieces = parse(format, bytes, 7);

    expect(pieces).toEqual(whole);
  });
});

describe(parseReport.name, () => {
  it('hands on batches no larger than asked for, reading the next chunk only after the last batch settled', async () => {
    const cases = Array.from({ length: 7 }, (_, i) => `<testcase name="t${i}" classname="C"/>`).join('');
    const report = `<testsuite name="S">${cases}</testsuite>`;
    let pending = 0;
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let i = 0; i < report.length; i += 20) {
        expect(pending).toBe(0);
        yield Buffer.from(report.slice(i, i + 20));
      }
    }
    const batches: number[] = [];

    const outcome = await parseReport(
      'junit',
      chunks(),
      async (batch) => {
        pending++;
        batches.push(batch.length);
        await new Promise((resolve) => setTimeout(resolve, 1));
        pending--;
      },
      3,
    );

    expect(Math.max(...batches)).toBeLessThanOrEqual(3);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(7);
    expect(outcome).toEqual({
      format: 'junit',
      counts: { total: 7, passed: 7, failed: 0, broken: 0, skipped: 0 },
      warnings: [],
    });
  });
});

describe('junit', () => {
  it('takes name, class as suite, duration, message attribute and text as trace, output and properties', () => {
    const { results } = parse(
      'junit',
      `<testsuites><testsuite name="S" timestamp="2025-03-01T10:00:00Z">
        <testcase name="adds" classname="com.shop.CartTest" time="1.5" file="src/CartTest.java">
          <properties><property name="owner" value="cart"/></properties>
          <failure message="expected 3" type="AssertionError">AssertionError: expected 3
  at CartTest.adds</failure>
          <system-out>log line</system-out>
        </testcase></testsuite></testsuites>`,
    );

    expect(results).toEqual([
      {
        name: 'adds',
        suite: 'com.shop.CartTest',
        status: 'FAILED',
        durationMs: 1500,
        message: 'expected 3',
        trace: 'AssertionError: expected 3\n  at CartTest.adds\n\n[stdout]\nlog line',
        startedAt: '2025-03-01T10:00:00Z',
        attributes: { owner: 'cart', file: 'src/CartTest.java' },
      },
    ]);
  });

  it('takes the worst direct child: error over failure over skipped', () => {
    const { results } = parse(
      'junit',
      `<testsuite name="S">
        <testcase name="a"><skipped/><failure message="f"/><error message="e">boom</error></testcase>
        <testcase name="b"><skipped message="later"/><failure message="f"/></testcase>
        <testcase name="c"><skipped message="not today"/></testcase>
        <testcase name="d"><nested><error/></nested></testcase>
      </testsuite>`,
    );

    expect(results.map((r) => [r.name, r.status, r.message])).toEqual([
      ['a', 'BROKEN', 'e'],
      ['b', 'FAILED', 'f'],
      ['c', 'SKIPPED', 'not today'],
      ['d', 'PASSED', undefined],
    ]);
  });

  it('uses the first line of the text as message when there is no message attribute (Jest)', () => {
    const { results } = parse(
      'junit',
      '<testsuite name="S"><testcase name="a"><failure>\n  Error: nope\n    at x\n</failure></testcase></testsuite>',
    );

    expect(results[0].message).toBe('Error: nope');
    expect(results[0].trace).toBe('  Error: nope\n    at x');
  });

  it("writes a Surefire test's flaky and rerun elements as its earlier attempts, its own status last", () => {
    const { results, warnings } = parse(
      'junit',
      `<testsuite name="S">
        <testcase name="flaky" classname="C" time="0.5"><flakyFailure message="m"><stackTrace>x</stackTrace></flakyFailure><flakyError type="E"/><system-out>out</system-out></testcase>
        <testcase name="broken" classname="C"><error message="e"/><rerunFailure message="r"/></testcase>
        <testcase name="plain" classname="C"/>
      </testsuite>`,
    );

    expect(
      results.map((r) => [r.name, r.suite, r.status, r.retry, r.message, r.durationMs, r.trace]),
    ).toEqual([
      ['flaky', 'C', 'FAILED', undefined, 'm', undefined, undefined],
      ['flaky', 'C', 'BROKEN', 1, 'E', undefined, undefined],
      // Its own result: passed on retry, with its time and output.
      ['flaky', 'C', 'PASSED', 2, undefined, 500, '[stdout]\nout'],
      ['broken', 'C', 'FAILED', undefined, 'r', undefined, undefined],
      ['broken', 'C', 'BROKEN', 1, 'e', undefined, undefined],
      ['plain', 'C', 'PASSED', undefined, undefined, undefined, undefined],
    ]);
    expect(warnings).toEqual([]);
  });

  it('takes the enclosing testsuite as suite when classname is the test title (jest-junit, mocha-junit-reporter)', () => {
    const { results } = parse(
      'junit',
      `<testsuites><testsuite name="Cart">
        <testcase classname="Cart adds" name="Cart adds"/>
        <testcase classname="removes" name="Cart removes"/>
        <testcase name="k6 check"/>
      </testsuite></testsuites>`,
    );

    expect(results.map((r) => r.suite)).toEqual(['Cart', 'Cart', 'Cart']);
  });

  it('reads a suite-level error in a suite without test cases as one BROKEN test named after the suite', () => {
    const { results, warnings } = parse(
      'junit',
      '<testsuites><testsuite name="S" timestamp="2026-11-20T10:00:00Z"><error message="setup failed" type="E">trace</error></testsuite></testsuites>',
    );

    expect(results).toEqual([
      expect.objectContaining({
        name: 'S',
        suite: 'S',
        status: 'BROKEN',
        message: 'setup failed',
        trace: 'trace',
      }),
    ]);
    expect(warnings).toEqual([
      expect.stringContaining('it was imported as one BROKEN test named after the suite'),
    ]);
  });

  it('warns about a suite-level error beside test cases, which is no test', () => {
    const { results, warnings } = parse(
      'junit',
      '<testsuite name="S"><testcase name="t"/><error message="teardown failed"/></testsuite>',
    );

    expect(results).toEqual([expect.objectContaining({ name: 't', status: 'PASSED' })]);
    expect(warnings).toEqual([
      expect.stringContaining('Test suite "S" has an <error> or <failure> outside any <testcase>'),
    ]);
  });

  it('leaves out a start time without an offset, and reads one that names UTC in words', () => {
    const { results, warnings } = parse(
      'junit',
      `<testsuites>
        <testsuite name="A" timestamp="2025-03-01T10:00:00"><testcase name="a"/></testsuite>
        <testsuite name="B" timestamp="Sat, 01 Mar 2025 10:00:00 GMT"><testcase name="b"/></testsuite>
        <testsuite name="C" timestamp="2025-03-01T10:00:00 UTC"><testcase name="c"/></testsuite>
      </testsuites>`,
    );

    expect(results.map((r) => r.startedAt)).toEqual([
      undefined,
      '2025-03-01T10:00:00.000Z',
      '2025-03-01T10:00:00Z',
    ]);
    expect(warnings).toEqual([expect.stringContaining('"2025-03-01T10:00:00"')]);
  });

  it('decodes the encoding the XML declaration names', () => {
    const latin1 = Buffer.from(
      '<?xml version="1.0" encoding="ISO-8859-1"?><testsuite name="S"><testcase name="Caf\xe9"/></testsuite>',
      'latin1',
    );

    expect(parse('junit', latin1).results[0].name).toBe('Café');
  });

  it('decodes UTF-16 with a byte order mark', () => {
    const utf16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(
        '<?xml version="1.0" encoding="UTF-16"?><testsuite name="S"><testcase name="naïve ✓"/></testsuite>',
        'utf16le',
      ),
    ]);

    expect(parse('junit', utf16, 3).results[0].name).toBe('naïve ✓');
  });
});

describe('testng', () => {
  it('leaves out configuration methods, puts data-provider parameters into the name and the class into the suite', () => {
    const { results, warnings } = parse(
      'testng',
      `<testng-results><suite name="S"><test name="T"><class name="shop.OrderTest">
        <test-method is-config="true" name="setUp" status="FAIL"/>
        <test-method name="total" status="FAIL" duration-ms="12" started-at="2025-03-01T10:00:00Z" description="sums">
          <params><param index="0"><value><![CDATA[3]]></value></param><param index="1"><value is-null="true"/></param></params>
          <exception class="java.lang.AssertionError"><message><![CDATA[
            expected [30] but found [31]
          ]]></message><full-stacktrace><![CDATA[java.lang.AssertionError
    at shop.OrderTest.total]]></full-stacktrace></exception>
        </test-method>
        <test-method name="ships" status="SKIP"/>
      </class></test></suite></testng-results>`,
    );

    expect(results).toEqual([
      {
        name: 'total(3, null)',
        suite: 'shop.OrderTest',
        status: 'FAILED',
        durationMs: 12,
        message: 'expected [30] but found [31]',
        trace: 'java.lang.AssertionError\n    at shop.OrderTest.total',
        startedAt: '2025-03-01T10:00:00Z',
        attributes: { description: 'sums' },
      },
      { name: 'ships', suite: 'shop.OrderTest', status: 'SKIPPED' },
    ]);
    expect(warnings).toEqual([expect.stringContaining('1 configuration methods')]);
  });
});

describe('nunit', () => {
  it('splits an NUnit 2 full name into class and method', () => {
    const { results } = parse(
      'nunit',
      `<test-results><test-suite name="F"><results>
        <test-case name="Shop.Tests.CartTests.Adds(&quot;a.b&quot;)" executed="True" result="Error" time="0,25">
          <failure><message><![CDATA[boom]]></message><stack-trace><![CDATA[at Adds]]></stack-trace></failure>
        </test-case>
      </results></test-suite></test-results>`,
    );

    expect(results).toEqual([
      {
        name: 'Adds("a.b")',
        suite: 'Shop.Tests.CartTests',
        status: 'BROKEN',
        durationMs: 250,
        message: 'boom',
        trace: 'at Adds',
      },
    ]);
  });

  it("maps NUnit 3 results with their labels, keeping a warning's reason and dropping NUnit's own properties", () => {
    const { results } = parse(
      'nunit',
      `<test-run><test-suite type="TestFixture" fullname="Shop.CartTests">
        <test-case name="A" classname="Shop.CartTests" result="Passed"><reason><message>Success</message></reason>
          <properties><property name="_PID" value="1"/><property name="Category" value="Fast"/><property name="Category" value="Cart"/></properties></test-case>
        <test-case name="B" classname="Shop.CartTests" result="Failed" label="Error"/>
        <test-case name="C" classname="Shop.CartTests" result="Failed" label="Invalid"/>
        <test-case name="D" classname="Shop.CartTests" result="Warning"><reason><message>big cart</message></reason></test-case>
        <test-case name="E" classname="Shop.CartTests" result="Inconclusive"/>
        <test-case name="F" fullname="Shop.Other.F" result="Failed" start-time="2025-03-01 10:00:00Z"/>
      </test-suite></test-run>`,
    );

    expect(results.map((r) => [r.name, r.suite, r.status, r.message])).toEqual([
      ['A', 'Shop.CartTests', 'PASSED', undefined],
      ['B', 'Shop.CartTests', 'BROKEN', undefined],
      ['C', 'Shop.CartTests', 'BROKEN', undefined],
      ['D', 'Shop.CartTests', 'PASSED', 'big cart'],
      ['E', 'Shop.CartTests', 'SKIPPED', undefined],
      ['F', 'Shop.Other', 'FAILED', undefined],
    ]);
    expect(results[0].attributes).toEqual({ Category: 'Fast, Cart' });
    expect(results[5].startedAt).toBe('2025-03-01T10:00:00Z');
  });
});

describe('xunit', () => {
  it('takes the class as suite, drops it from the display name, and reads traits, skip reasons and output', () => {
    const { results, warnings } = parse(
      'xunit',
      `<assemblies><assembly name="a.dll">
        <errors><error type="assembly-cleanup" name="Fixture"><failure><message>x</message></failure></error></errors>
        <collection name="C">
          <test name="Shop.CartTests.Adds(n: 1.5)" type="Shop.CartTests" method="Adds" time="0.5" result="Fail">
            <failure exception-type="Xunit.Sdk.EqualException"><message>differs</message><stack-trace>at Adds</stack-trace></failure>
            <output>log</output>
            <traits><trait name="Category" value="Fast"/></traits>
          </test>
          <test name="Ships abroad" type="Shop.CartTests" method="Ships" time="0" result="Skip"><reason><![CDATA[later]]></reason></test>
        </collection></assembly></assemblies>`,
    );

    expect(results).toEqual([
      {
        name: 'Adds(n: 1.5)',
        suite: 'Shop.CartTests',
        status: 'FAILED',
        durationMs: 500,
        message: 'differs',
        trace: 'at Adds\n\n[stdout]\nlog',
        attributes: { Category: 'Fast' },
      },
      { name: 'Ships abroad', suite: 'Shop.CartTests', status: 'SKIPPED', durationMs: 0, message: 'later' },
    ]);
    expect(warnings).toEqual([expect.stringContaining('error outside any test')]);
  });
});

describe('trx', () => {
  it('counts the direct children of Results only, splitting a qualified testName into class and method', () => {
    const { results, warnings } = parse(
      'trx',
      `<TestRun xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010"><Results>
        <UnitTestResult testName="Shop.CartTests.Adds" outcome="Failed" duration="00:01:02.5000000" startTime="2025-03-01T10:00:00.1234567+01:00">
          <Output><StdOut>out</StdOut><ErrorInfo><Message>differs</Message><StackTrace>at Adds</StackTrace></ErrorInfo></Output>
        </UnitTestResult>
        <UnitTestResult testName="Vat" outcome="Passed">
          <InnerResults><UnitTestResult testName="Vat (1)" outcome="Failed"/><UnitTestResult testName="Vat (2)" outcome="Passed"/></InnerResults>
        </UnitTestResult>
        <UnitTestResult testName="NoOutcome"/>
      </Results><TestDefinitions/></TestRun>`,
    );

    expect(results).toEqual([
      {
        name: 'Adds',
        suite: 'Shop.CartTests',
        status: 'FAILED',
        durationMs: 62_500,
        message: 'differs',
        trace: 'at Adds\n\n[stdout]\nout',
        startedAt: '2025-03-01T10:00:00.1234567+01:00',
      },
      { name: 'Vat', status: 'PASSED' },
      { name: 'NoOutcome', status: 'BROKEN' },
    ]);
    expect(warnings).toEqual([
      expect.stringContaining('"NoOutcome" has no outcome'),
      expect.stringContaining('2 inner results'),
    ]);
  });
});

describe('cucumber', () => {
  it('takes the feature name as suite even when it comes after the scenarios (cucumber-js)', () => {
    const report = JSON.stringify([
      {
        elements: [
          {
            type: 'scenario',
            name: 'A',
            keyword: 'Scenario',
            steps: [{ keyword: 'Given ', name: 'x', result: { status: 'passed', duration: 2_000_000 } }],
          },
        ],
        name: 'Basket',
        uri: 'features/basket.feature',
      },
    ]);

    expect(parse('cucumber', report).results).toEqual([
      { name: 'A', suite: 'Basket', status: 'PASSED', durationMs: 2 },
    ]);
  });

  it('combines a separate background, hooks and step hooks, taking the first failure as the message', () => {
    const passed = { status: 'passed', duration: 1_000_000 };
    const report = JSON.stringify([
      {
        name: 'Returns',
        elements: [
          {
            type: 'background',
            keyword: 'Background',
            steps: [
              {
                keyword: 'Given ',
                name: 'an order',
                result: { status: 'failed', error_message: 'no order' },
              },
            ],
          },
          {
            type: 'scenario',
            id: 'r;a',
            name: 'A',
            steps: [{ keyword: 'When ', name: 'I return', result: passed }],
          },
          {
            type: 'scenario',
            id: 'r;b',
            name: 'B',
            steps: [
              {
                keyword: 'When ',
                name: 'x',
                result: passed,
                after: [{ result: { status: 'failed', error_message: 'hook' } }],
              },
            ],
          },
          {
            type: 'scenario',
            id: 'r;c',
            name: 'C',
            before: [{ result: passed }],
            steps: [{ keyword: 'When ', name: 'y', result: { status: 'ambiguous' } }],
          },
          {
            type: 'scenario',
            id: 'r;d',
            name: 'D',
            steps: [{ keyword: 'When ', name: 'z', result: { status: 'undefined' } }],
          },
          {
            type: 'scenario',
            id: 'r;d',
            name: 'D',
            steps: [{ keyword: 'When ', name: 'z', result: passed }],
          },
        ],
      },
    ]);

    const { results, warnings } = parse('cucumber', report);

    expect(results.map((r) => [r.name, r.status, r.message, r.retry])).toEqual([
      ['A', 'FAILED', 'no order', undefined],
      ['B', 'FAILED', 'hook', undefined],
      ['C', 'BROKEN', 'The step "When y" is ambiguous', undefined],
      ['D', 'SKIPPED', 'The step "When z" is undefined', undefined],
      ['D', 'PASSED', undefined, 1],
    ]);
    expect(warnings).toEqual([expect.stringContaining('attempted more than once')]);
  });

  it('names an unnamed scenario by its keyword and line', () => {
    const report =
      '[{"name":"F","elements":[{"type":"scenario","keyword":"Scenario","name":"","line":7,"steps":[]}]}]';

    expect(parse('cucumber', report).results[0].name).toBe('Scenario (line 7)');
  });
});

describe('ctrf', () => {
  it('reads a test: suite path, times, retries, output and labels', () => {
    const report = JSON.stringify({
      results: {
        tool: { name: 'x' },
        tests: [
          {
            name: 'pays',
            status: 'failed',
            duration: 12.4,
            start: 1740823200000,
            suite: ['shop.spec.ts', 'checkout'],
            message: 'declined',
            trace: 'at pay',
            stdout: ['a', 'b'],
            retries: 2,
            tags: ['@smoke'],
            labels: { owner: 'payments', jira: ['S-1', 'S-2'] },
            attachments: [{ path: 'x.png' }],
          },
          { name: 'later', status: 'pending' },
          { name: 'odd', status: 'other' },
        ],
      },
    });

    const { results } = parse('ctrf', report);

    // Its two retries before it, as attempts: failures (a retry follows one), with what the test says of itself.
    const attempt = (retry: number) => ({
      name: 'pays',
      suite: 'shop.spec.ts > checkout',
      status: 'FAILED',
      startedAt: '2025-03-01T10:00:00.000Z',
      ...(retry ? { retry } : {}),
      attributes: { tags: '@smoke', owner: 'payments', jira: 'S-1, S-2' },
    });
    expect(results).toEqual([
      attempt(0),
      attempt(1),
      {
        name: 'pays',
        suite: 'shop.spec.ts > checkout',
        status: 'FAILED',
        durationMs: 12,
        startedAt: '2025-03-01T10:00:00.000Z',
        message: 'declined',
        trace: 'at pay\n\n[stdout]\na\nb',
        retry: 2,
        attributes: { tags: '@smoke', owner: 'payments', jira: 'S-1, S-2' },
      },
      { name: 'later', status: 'SKIPPED' },
      { name: 'odd', status: 'BROKEN' },
    ]);
  });

  it("writes a flaky test's retryAttempts as its earlier attempts, in the order of their attempt, and caps many retries", () => {
    const report = JSON.stringify({
      results: {
        tool: { name: 'x' },
        tests: [
          {
            name: 'flaky',
            status: 'passed',
            duration: 300,
            flaky: true,
            retries: 2,
            retryAttempts: [
              { attempt: 2, status: 'failed', duration: 130, message: 'second', trace: 'at b' },
              { attempt: 1, status: 'other', duration: 120, message: 'first' },
              { attempt: 3, status: 'passed', duration: 140 },
            ],
          },
          { name: 'stuck', status: 'failed', retries: 1000 },
        ],
      },
    });

    const { results, warnings } = parse('ctrf', report);

    expect(results.slice(0, 3)).toEqual([
      { name: 'flaky', status: 'BROKEN', durationMs: 120, message: 'first', attributes: { flaky: 'true' } },
      {
        name: 'flaky',
        status: 'FAILED',
        durationMs: 130,
        message: 'second',
        trace: 'at b',
        retry: 1,
        attributes: { flaky: 'true' },
      },
      { name: 'flaky', status: 'PASSED', durationMs: 300, retry: 2, attributes: { flaky: 'true' } },
    ]);
    // A number is no evidence of that many runs: 20 attempts written, the test's own result its 1,000th retry.
    const stuck = results.slice(3);
    expect(stuck).toHaveLength(21);
    expect(stuck.at(-1)).toEqual({ name: 'stuck', status: 'FAILED', retry: 1000 });
    expect(warnings).toEqual([
      'Test "stuck" was retried 1000 times; its first 20 retries were imported as attempts',
    ]);
  });
});
