import {
  JsonStream,
  type JsonChoice,
  type JsonKind,
  type JsonPath,
  type JsonStreamOptions,
  type JsonValue,
} from './json-stream.js';
import { ReportError } from './report-parser.js';

/** Reads `text` in pieces of `chunk` characters, collecting the root value. */
function readWhole(text: string, chunk: number, options?: JsonStreamOptions): JsonValue | undefined {
  let root: JsonValue | undefined;
  const sut = new JsonStream({ select: () => 'collect', value: (_path, value) => (root = value) }, options);
  for (let i = 0; i < text.length; i += chunk) {
    sut.write(text.slice(i, i + chunk));
  }
  sut.end();
  return root;
}

function errorOf(text: string, options?: JsonStreamOptions): ReportError {
  try {
    readWhole(text, 3, options);
  } catch (error) {
    if (error instanceof ReportError) {
      return error;
    }
    throw error;
  }
  throw new Error('accepted');
}

const DOCUMENTS = [
  '{}',
  '[]',
  '0',
  '-0.5e-3',
  '"text"',
  'true',
  'null',
  ' { "a" : [ 1 , 2.5 , -3E+2 , 0 ] , "b" : { "c" : null , "d" : false } } ',
  '["\\"\\\\\\/\\b\\f\\n\\r\\t", "\\u00e9\\u20AC", "\\ud83d\\ude00 and 😀", "tab\\tend"]',
  '{"nested":[[[[{"deep":[1,[2,[3]]]}]]]],"empty":{"a":[],"b":{}}}',
  '[12345678901234567890, 1.7976931348623157e308, 5e-324]',
];

describe(JsonStream.name, () => {
  it.each(DOCUMENTS)('reads %s as JSON.parse does, in pieces of any size', (text) => {
    for (const chunk of [1, 2, 5, text.length]) {
      expect(readWhole(text, chunk)).toEqual(JSON.parse(text));
    }
  });

  it('hands over only what is selected, with its path, and says when a descended container closes', () => {
    const events: string[] = [];
    const sut = new JsonStream({
      select(path: JsonPath, kind: JsonKind): JsonChoice {
        events.push(`select ${path.join('.')} ${kind}`);
        if (path.length < 2) {
          return 'descend';
        }
        return path[1] === 'keep' ? 'collect' : 'skip';
      },
      value: (path, value) => events.push(`value ${path.join('.')} ${JSON.stringify(value)}`),
      leave: (path, kind) => events.push(`leave ${path.join('.')} ${kind}`),
    });

    sut.write('[{"keep":{"x":[1]},"drop":{"y":2}},{"keep":3}]');
    sut.end();

    expect(events).toEqual([
      'select  array',
      'select 0 object',
      'select 0.keep object',
      'value 0.keep {"x":[1]}',
      'select 0.drop object',
      'leave 0 object',
      'select 1 object',
      'select 1.keep number',
      'value 1.keep 3',
      'leave 1 object',
      'leave  array',
    ]);
  });

  it('reads over the values of skipped keys inside a collected value', () => {
    expect(readWhole('{"a":1,"big":{"x":[1,2,3]},"b":2}', 4, { skipKeys: new Set(['big']) })).toEqual({
      a: 1,
      b: 2,
    });
  });

  it('keeps "__proto__" as an ordinary member', () => {
    const value = readWhole('{"__proto__":{"polluted":true}}', 100) as Record<string, unknown>;

    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });

  it('cuts strings at maxStringChars', () => {
    expect(readWhole(`["${'x'.repeat(100)}"]`, 7, { maxStringChars: 10 })).toEqual(['x'.repeat(10)]);
  });

  it('refuses a collected value beyond maxCollectChars with LIMIT', () => {
    expect(errorOf(`[${'"abc",'.repeat(100)}1]`, { maxCollectChars: 50 }).kind).toBe('LIMIT');
  });

  it('refuses nesting beyond maxDepth with LIMIT, without recursion', () => {
    expect(errorOf('['.repeat(100_000)).message).toBe(
      'JSON nested deeper than 64 levels at line 1, column 65',
    );
  });

  it.each([
    ['{"a":1,}', 'line 1, column 8: expected a property name in double quotes but found "}"'],
    ['[1,]', 'line 1, column 4: unexpected "]" where a value was expected'],
    ['{"a" 1}', `line 1, column 6: expected ':' but found "1"`],
    ['[01]', `line 1, column 3: expected ',' or ']' but found "1"`],
    ['[1.]', 'line 1, column 4: invalid number before "]"'],
    ['["a\nb"]', 'line 1, column 4: control character in a string (it must be escaped)'],
    ['["\\x"]', 'line 1, column 4: invalid escape \\x'],
    ['["\\u12G4"]', 'line 1, column 7: invalid \\u escape (four hex digits expected)'],
    ['[tru]', 'line 1, column 5: unexpected "]" (expected true)'],
    ['{}\n{}', 'line 2, column 1: unexpected "{" after the end of the document'],
    ['{\n  "a": [1, 2,\n', 'line 3, column 1: the document ends before its last value does'],
    ['', 'line 1, column 1: the document ends before its last value does'],
    ['-', 'line 1, column 2: incomplete number'],
  ])('refuses %j naming where', (text, where) => {
    const error = errorOf(text);

    expect(error.kind).toBe('MALFORMED');
    expect(error.message).toBe(`Not well-formed JSON at ${where}`);
  });
});
