import { jest } from '@jest/globals';
import { SaxesParser } from 'saxes';
import { createReportParser } from './parse-report.js';
import { MAX_TEXT_CHARS, MAX_TOKEN_CHARS, ReportError, type ParsedResult } from './report-parser.js';
import { XmlTokenCutter } from './xml-cut.js';
import { seeded } from '../../../test/support/seeded.js';

/** `xml` through a cutter of `max` in pieces of the sizes `sizes` gives; what it passes on, and the cuts. */
function cut(xml: string, max: number, sizes: () => number): { out: string; cuts: number; dropped: number } {
  const kept: string[] = [];
  let cuts = 0;
  let dropped = 0;
  const cutter = new XmlTokenCutter(max, {
    keep: (segment) => kept.push(segment),
    drop: (_text, from, to) => (dropped += to - from),
    cut: () => cuts++,
  });
  for (let i = 0; i < xml.length;) {
    const n = Math.max(1, sizes());
    cutter.write(xml.slice(i, i + n));
    i += n;
  }
  return { out: kept.join(''), cuts, dropped };
}

/** Every token of a document as saxes reads it: texts, attribute values, comments, CDATA sections, PIs. */
function tokens(xml: string): string[] {
  const found: string[] = [];
  const sax = new SaxesParser({ xmlns: false });
  sax.on('error', (error) => {
    throw error;
  });
  sax.on('text', (text) => found.push(text));
  sax.on('cdata', (text) => found.push(text));
  sax.on('comment', (text) => found.push(text));
  sax.on('processinginstruction', (pi) => found.push(pi.body));
  sax.on('opentag', (tag) => found.push(...Object.values(tag.attributes as Record<string, string>)));
  sax.write(xml).close();
  return found;
}

const MAX = 40;
const long = (unit: string, n = 100) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

// Documents with a token longer than MAX of every kind, and the places a careless cut would break one.
const DOCUMENTS: [string, string][] = [
  ['a long text', `<a>${long('text ')}</a>`],
  ['a long attribute value in double quotes', `<a b="${long('v')}" c="short"/>`],
  ['a long attribute value in single quotes, holding the other quote', `<a b='${long('say "hi" ')}'/>`],
  ['a long comment', `<a><!--${long('c')}--></a>`],
  ['a comment with "-" where the cut falls', `<a><!--${'c'.repeat(MAX - 1)}-x-y-z${long('d')}--></a>`],
  ['a long CDATA section', `<a><![CDATA[${long('<x>&')}]]></a>`],
  ['a CDATA section ending "]]]" after the cut', `<a><![CDATA[${long('c')}]]]></a>`],
  [
    'a CDATA section with "]" where the cut falls',
    `<a><![CDATA[${'c'.repeat(MAX - 1)}]]x${long('d')}]]></a>`,
  ],
  ['a long processing instruction', `<a><?pi ${long('p')}?></a>`],
  ['a PI with "?" where the cut falls', `<a><?pi ${'p'.repeat(MAX - 5)}?x?${long('q')}??></a>`],
  ['entity references across the cut (text)', `<a>${'&amp;&#x1F600;&lt;x'.repeat(25)}</a>`],
  ['entity references across the cut (attribute)', `<a b="${'&quot;&#38;y'.repeat(40)}"/>`],
  ['surrogate pairs across the cut', `<a b="${long('😀')}">${'x'.repeat(MAX - 1)}${long('😀')}</a>`],
  ['CR LF across the cut', `<a>${long('ab\r\n')}</a>`],
  ['long text around elements', `<a>${long('x')}<b>${long('y')}</b>${long('z')}<c/>${long('w')}</a>`],
  ['"]]>"-like text after a cut', `<a>${long('x')}]]&gt;</a>`],
  ['a long prolog comment and PI', `<?xml version="1.0"?><!--${long('c')}--><?pi ${long('p')}?><a/>`],
  [
    'an element spanning many long attributes',
    `<a ${Array.from({ length: 5 }, (_, i) => `b${i}="${long(String(i))}"`).join(' ')}>t</a>`,
  ],
  ['"-->" and "?>" inside attribute values', `<a b="--> ?> ]]> ${long('v')}"><!-- a "quote" ' -->text</a>`],
];

describe('XmlTokenCutter', () => {
  it.each(DOCUMENTS)('keeps %s well-formed, cut to the limit, whatever the chunks', (_what, xml) => {
    const random = seeded(xml.length);
    const whole = cut(xml, MAX, () => xml.length);
    expect(whole.cuts).toBeGreaterThan(0);
    for (const sizes of [() => 1, () => 2, () => 3, () => 7, () => 1 + Math.floor(random() * 60)]) {
      expect(cut(xml, MAX, sizes).out).toBe(whole.out);
    }
    const before = tokens(xml);
    const after = tokens(whole.out); // throws if no longer well-formed
    expect(after).toHaveLength(before.length);
    after.forEach((token, i) => {
      // Each token is its start (entities decoded), no longer than the limit plus what a character expands to.
      expect(before[i].startsWith(token)).toBe(true);
      expect(token.length).toBeLessThanOrEqual(2 * MAX + 2);
      if (before[i].length > 2 * MAX + 2) {
        // (a processing instruction's target, "pi ", is not part of its body)
        expect(token.length).toBeGreaterThanOrEqual(MAX - 4);
      }
    });
  });

  it('passes a document without long tokens on as it came, in the pieces it came in', () => {
    const xml = `<?xml version="1.0"?><a b="v&amp;"><!-- c --><![CDATA[d]]><?pi e?>text &lt; 😀\r\n</a>`;
    const kept: string[] = [];
    const cutter = new XmlTokenCutter(MAX, {
      keep: (segment) => kept.push(segment),
      drop: () => {
        throw new Error('nothing to drop');
      },
      cut: () => {
        throw new Error('nothing to cut');
      },
    });
    cutter.write(xml.slice(0, 30));
    cutter.write(xml.slice(30));
    expect(kept).toEqual([xml.slice(0, 30), xml.slice(30)]);
  });

  it('cuts at the limit exactly, counting a reference as one character, whether a token is passed whole or not', () => {
    // A text or attribute value that ends within the piece before it could reach the limit goes on whole (a run of
    // code units is never more characters than its length); any other is counted a character at a time.
    const at = (xml: string) => cut(xml, MAX, () => xml.length);
    for (const [value, cuts] of [
      ['x'.repeat(MAX), 0],
      ['x'.repeat(MAX + 1), 1],
      ['&amp;'.repeat(MAX), 0],
      [`${'&amp;'.repeat(MAX)}x`, 1],
      [`${'x'.repeat(MAX - 1)}😀`, 0],
    ] as const) {
      for (const xml of [`<a>${value}</a>`, `<a b="${value}"/>`, `<a b='${value}'/>`]) {
        expect([xml, at(xml).cuts]).toEqual([xml, cuts]);
        expect([xml, at(`<r>${xml}${xml}</r>`).cuts]).toEqual([xml, 2 * cuts]);
      }
    }
    expect(at(`<a>${'x'.repeat(MAX + 1)}</a>`).out).toBe(`<a>${'x'.repeat(MAX)}</a>`);
    expect(at(`<a b="${'&amp;'.repeat(MAX)}x"/>`).out).toBe(`<a b="${'&amp;'.repeat(MAX)}"/>`);
  });

  it('searches a run that cannot go on whole for its end once, not once a character', () => {
    // A text and a value that go on past the piece read, and one longer than the limit within it.
    const pieces = [
      '<a b="',
      'v'.repeat(5_000),
      '" c="',
      'w'.repeat(5_000),
      `">${'x'.repeat(3 * MAX)}<b/>`,
      't'.repeat(5_000),
    ];
    const cutter = new XmlTokenCutter(MAX, {
      keep: () => undefined,
      drop: () => undefined,
      cut: () => undefined,
    });
    const indexOf = jest.spyOn(String.prototype, 'indexOf');
    try {
      for (const piece of pieces) {
        cutter.write(piece);
      }
      expect(indexOf.mock.calls.length).toBeLessThan(50);
    } finally {
      indexOf.mockRestore();
    }
  });

  it('leaves out all but the start of a 10 MB attribute and a 10 MB text without copying them', () => {
    const big = 'x'.repeat(10_000_000);
    const result = cut(`<a b="${big}">${big}</a>`, MAX, () => 65_536);
    expect(result.out).toBe(`<a b="${'x'.repeat(MAX)}">${'x'.repeat(MAX)}</a>`);
    expect(result.dropped).toBe(2 * (10_000_000 - MAX));
  });
});

describe('XML reports with over-long text', () => {
  function parse(xml: string, chunk = 65_536): { results: ParsedResult[]; warnings: string[] } {
    const results: ParsedResult[] = [];
    const warnings: string[] = [];
    const parser = createReportParser('junit', {
      result: (r) => results.push(r),
      warning: (w) => warnings.push(w),
    });
    const bytes = Buffer.from(xml);
    for (let i = 0; i < bytes.length; i += chunk) {
      parser.write(bytes.subarray(i, i + chunk));
    }
    parser.end();
    return { results, warnings };
  }

  it('never hands saxes more than the cut of a 20 MB attribute value or text (it held them whole)', () => {
    const big = 'm'.repeat(20_000_000);
    const written = jest.spyOn(SaxesParser.prototype, 'write');
    try {
      const { results, warnings } = parse(
        `<testsuite name="s"><testcase name="t"><failure message="${big}">${big}</failure></testcase></testsuite>`,
      );
      const handed = written.mock.calls.reduce(
        (sum, [chunk]) => sum + ((chunk as string | null)?.length ?? 0),
        0,
      );
      expect(handed).toBeLessThan(2 * MAX_TOKEN_CHARS + 1000);
      expect(results[0].message).toHaveLength(MAX_TEXT_CHARS);
      expect(results[0].trace).toHaveLength(MAX_TEXT_CHARS);
      expect(warnings).toEqual([
        `A text, comment or attribute value longer than ${MAX_TOKEN_CHARS} characters was cut (and 1 more like it)`,
        'Test "t": its message was cut to 65536 characters',
        'Test "t": its trace was cut to 65536 characters',
      ]);
    } finally {
      written.mockRestore();
    }
  });

  it('names the line and column of an error after a cut as they are in the document sent', () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i} of a long trace`).join('\n');
    const xml = `<testsuite name="s">\n<testcase name="t"><failure>${lines}</failure></testcase>\n<testcase name="u" a="${'v'.repeat(200_000)}" <oops/>\n</testsuite>`;
    const error = (() => {
      try {
        parse(xml, 4096);
      } catch (e) {
        return e as ReportError;
      }
      throw new Error('accepted');
    })();
    const line = 2 + 10_000; // the testsuite's line, then the trace's 10,000 lines (half of them cut)
    const column = xml.split('\n')[line - 1].indexOf('<oops/>');
    expect(error.message).toMatch(new RegExp(`^Not well-formed XML at line ${line}, column ${column + 1}: `));
  });
});
