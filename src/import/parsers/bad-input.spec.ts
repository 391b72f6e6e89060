import { createReportParser } from './parse-report.js';
import {
  MAX_NAME_CHARS,
  MAX_TEXT_CHARS,
  MAX_TOKEN_CHARS,
  ReportError,
  type ParsedResult,
  type ReportErrorKind,
  type ReportFormat,
} from './report-parser.js';

interface Outcome {
  results: ParsedResult[];
  warnings: string[];
}

function parse(format: ReportFormat, input: string | Buffer, chunk = 4096): Outcome {
  const outcome: Outcome = { results: [], warnings: [] };
  const sut = createReportParser(format, {
    result: (r) => outcome.results.push(r),
    warning: (w) => outcome.warnings.push(w),
  });
  const bytes = typeof input === 'string' ? Buffer.from(input) : input;
  for (let i = 0; i < bytes.length; i += chunk) {
    sut.write(bytes.subarray(i, i + chunk));
  }
  sut.end();
  return outcome;
}

function failure(format: ReportFormat, input: string | Buffer, chunk?: number): ReportError {
  try {
    parse(format, input, chunk);
  } catch (error) {
    if (error instanceof ReportError) {
      return error;
    }
    throw error;
  }
  throw new Error('the report was accepted');
}

function expectRefused(error: ReportError, kind: ReportErrorKind, message: RegExp | string): void {
  expect({ kind: error.kind, message: error.message }).toEqual({
    kind,
    message: typeof message === 'string' ? message : expect.stringMatching(message),
  });
}

describe('malformed XML', () => {
  it('names the line and column where it stopped being well-formed', () => {
    const error = failure('junit', '<testsuite name="S">\n  <testcase name="a">\n  </testcas>\n</testsuite>');

    expectRefused(error, 'MALFORMED', 'Not well-formed XML at line 3, column 12: unexpected close tag.');
  });

  it('refuses a report that ends too early', () => {
    expectRefused(failure('junit', '<testsuite name="S"><testcase name="a">'), 'MALFORMED', /unclosed tag/);
  });

  it('keeps throwing the same error once it failed, rather than reading on in a broken state', () => {
    for (const [format, broken] of [
      ['junit', '<a></b>'],
      ['ctrf', '{]'],
    ] as const) {
      const sut = createReportParser(format, { result: () => undefined, warning: () => undefined });
      let first: unknown;
      try {
        sut.write(broken);
      } catch (error) {
        first = error;
      }

      expect(first).toBeInstanceOf(ReportError);
      expect(() => sut.write('<testsuite/>')).toThrow(first as Error);
      expect(() => sut.end()).toThrow(first as Error);
    }
  });

  it('refuses an empty body', () => {
    expectRefused(failure('junit', '  \n'), 'MALFORMED', 'The report is empty');
  });

  it('refuses an unknown entity instead of expanding it', () => {
    const error = failure('junit', '<testsuite name="S"><testcase name="&secret;"/></testsuite>');

    expectRefused(error, 'MALFORMED', /^Not well-formed XML at line 1, column \d+: undefined entity/);
  });
});

describe('DTDs', () => {
  const XXE =
    '<?xml version="1.0"?>\n<!DOCTYPE testsuite [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>\n' +
    '<testsuite name="S"><testcase name="&xxe;"/></testsuite>';

  const BILLION_LAUGHS =
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n' +
    Array.from(
      { length: 9 },
      (_, i) => ` <!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`,
    ).join('\n') +
    '\n]>\n<testsuite name="&lol9;"><testcase name="&lol9;"/></testsuite>';

  it.each([
    ['an external entity (XXE)', XXE],
    ['a billion laughs', BILLION_LAUGHS],
  ])('refuses %s at once, before any result', (_what, report) => {
    const started = performance.now();
    let results = 0;
    const sut = createReportParser('junit', { result: () => results++, warning: () => undefined });

    expect(() => sut.write(report)).toThrow(
      expect.objectContaining({
        kind: 'MALFORMED',
        message: expect.stringContaining('DTDs are not accepted'),
      }),
    );
    expect(results).toBe(0);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('refuses a doctype that arrives a byte at a time', () => {
    expectRefused(failure('junit', XXE, 1), 'MALFORMED', /DTDs are not accepted/);
  });

  it('refuses a huge internal subset after its first bytes, not after reading it all', () => {
    const sut = createReportParser('junit', { result: () => undefined, warning: () => undefined });

    expect(() => sut.write(`<!DOCTYPE x [${' '.repeat(10_000)}`)).toThrow(
      expect.objectContaining({ kind: 'MALFORMED' }),
    );
  });

  it('takes "<!DOCTYPE" inside a failure message as text', () => {
    const report =
      '<testsuite name="S"><testcase name="a"><failure><![CDATA[<!DOCTYPE html><html/>]]></failure></testcase></testsuite>';

    expect(parse('junit', report).results[0].trace).toBe('<!DOCTYPE html><html/>');
  });
});

describe('limits', () => {
  it('refuses 10,000 nested XML elements with LIMIT, without overflowing the stack', () => {
    const report = `<testsuite name="S">${'<x>'.repeat(10_000)}${'</x>'.repeat(10_000)}</testsuite>`;

    expectRefused(
      failure('junit', report),
      'LIMIT',
      /^Elements nested deeper than 64 levels \(at line 1, column \d+\)$/,
    );
  });

  it('refuses 10,000 nested JSON arrays with LIMIT', () => {
    expectRefused(
      failure('cucumber', '['.repeat(10_000)),
      'LIMIT',
      /^JSON nested deeper than 64 levels at line 1/,
    );
  });

  it('refuses an element with more than 256 attributes', () => {
    const attributes = Array.from({ length: 300 }, (_, i) => `a${i}="v"`).join(' ');

    expectRefused(failure('junit', `<testsuite ${attributes}/>`), 'LIMIT', /more than 256 attributes/);
  });

  it('cuts a 1 MB failure message to 64 KiB characters with one warning per kind', () => {
    const big = 'x'.repeat(1_000_000);
    const report = `<testsuite name="S">
      <testcase name="a"><failure message="${big}">${big}</failure></testcase>
      <testcase name="b"><failure message="${big}"/></testcase>
    </testsuite>`;

    const { results, warnings } = parse('junit', report, 65_536);

    expect(results.map((r) => r.message?.length)).toEqual([MAX_TEXT_CHARS, MAX_TEXT_CHARS]);
    expect(results[0].trace?.length).toBe(MAX_TEXT_CHARS);
    expect(warnings).toEqual([
      `A text, comment or attribute value longer than ${MAX_TOKEN_CHARS} characters was cut (and 2 more like it)`,
      'Test "a": its message was cut to 65536 characters (and 1 more like it)',
      'Test "a": its trace was cut to 65536 characters',
    ]);
  });

  it('cuts a 1 MB CTRF message to 64 KiB characters with a warning', () => {
    const report = JSON.stringify({
      results: { tests: [{ name: 'a', status: 'failed', message: 'y'.repeat(1_000_000) }] },
    });

    const { results, warnings } = parse('ctrf', report);

    expect(results[0].message).toHaveLength(MAX_TEXT_CHARS);
    expect(warnings).toEqual(['Test "a": its message was cut to 65536 characters']);
  });

  it('cuts a long name by characters as PostgreSQL counts them, never inside a surrogate pair', () => {
    const name = `${'a'.repeat(MAX_NAME_CHARS - 1)}😀😀`;

    const { results, warnings } = parse(
      'junit',
      `<testsuite name="S"><testcase name="${name}"/></testsuite>`,
    );

    expect(results[0].name).toBe(`${'a'.repeat(MAX_NAME_CHARS - 1)}😀`);
    expect(warnings).toEqual([expect.stringContaining('its name was cut to 1000 characters')]);
  });

  it('keeps a 5 MB system-out bounded', () => {
    const report = `<testsuite name="S"><testcase name="a"><system-out>${'log\n'.repeat(1_250_000)}</system-out></testcase></testsuite>`;

    const { results, warnings } = parse('junit', report, 65_536);

    expect(results[0].trace!.length).toBeLessThanOrEqual(MAX_TEXT_CHARS + 10);
    expect(warnings).toEqual([
      expect.stringContaining(`longer than ${MAX_TOKEN_CHARS} characters was cut`),
      expect.stringContaining('its standard output was cut'),
    ]);
  });

  it('repairs NUL characters and unpaired surrogates from JSON, which PostgreSQL cannot store', () => {
    const report = '{"results":{"tests":[{"name":"a\\u0000b","status":"passed","message":"x\\ud800y"}]}}';

    const { results, warnings } = parse('ctrf', report);

    expect(results[0]).toMatchObject({ name: 'ab', message: 'x\ufffdy' });
    expect(warnings).toHaveLength(2);
  });
});

describe('wrong format', () => {
  it('names TestNG when junit was asked for', () => {
    const report = '<?xml version="1.0"?>\n<testng-results total="1"><suite name="S"/></testng-results>';

    expectRefused(failure('junit', report), 'WRONG_FORMAT', 'This looks like a testng report, not junit');
  });

  it('names JUnit when CTRF was asked for', () => {
    expectRefused(
      failure('ctrf', '<testsuites/>'),
      'WRONG_FORMAT',
      'This looks like a junit report, not ctrf',
    );
  });

  it('names CTRF when Cucumber was asked for, and Cucumber when JUnit was', () => {
    const ctrf = '{"results":{"tool":{"name":"x"},"tests":[]}}';
    const cucumber = '[{"name":"F","elements":[]}]';

    expectRefused(
      failure('cucumber', ctrf, 5),
      'WRONG_FORMAT',
      'This looks like a ctrf report, not cucumber',
    );
    expectRefused(failure('junit', cucumber), 'WRONG_FORMAT', 'This looks like a cucumber report, not junit');
  });

  it('says what a format looks like when the document is no report at all', () => {
    expectRefused(
      failure('trx', '<html><body/></html>'),
      'WRONG_FORMAT',
      'This is not a trx report: its root element is <html>',
    );
    expectRefused(failure('ctrf', '{"tests":[]}'), 'WRONG_FORMAT', /^This is not a ctrf report/);
    expectRefused(
      failure('nunit', 'hello'),
      'MALFORMED',
      'This is not an XML document, so not a nunit report',
    );
  });

  it('refuses malformed JSON naming line and column', () => {
    expectRefused(
      failure('ctrf', '{"results": {\n  "tests": [1,]\n}}'),
      'MALFORMED',
      /^Not well-formed JSON at line 2, column 15: /,
    );
  });
});
