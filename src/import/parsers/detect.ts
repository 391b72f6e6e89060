import { decoderFor } from './decoding.js';
import { JsonStream, type JsonKind, type JsonPath } from './json-stream.js';
import { REPORT_FORMATS, type ReportFormat } from './report-parser.js';

export { REPORT_FORMATS, type ReportFormat };

/** How much of the start of a file {@link detectFormat} wants (less works when the file is smaller). */
export const DETECT_HEAD_BYTES = 16 * 1024;

export const TRX_NAMESPACE = 'http://microsoft.com/schemas/VisualStudio/TeamTest/2010';

/** The format whose documents have this root element (namespace prefixes ignored), if any. */
export function formatOfXmlRoot(name: string): ReportFormat | undefined {
  const colon = name.indexOf(':');
  switch (colon === -1 ? name : name.slice(colon + 1)) {
    case 'testsuites':
    case 'testsuite':
      return 'junit';
    case 'testng-results':
      return 'testng';
    case 'test-results': // NUnit 2
    case 'test-run': // NUnit 3
      return 'nunit';
    case 'assemblies': // xUnit.net v2
    case 'assembly': // xUnit.net v1
      return 'xunit';
    case 'TestRun':
      return 'trx';
    default:
      return undefined;
  }
}

/**
 * The report format of a file from its first bytes ({@link DETECT_HEAD_BYTES} suffice): XML by its root element
 * (a TRX TestRun by its namespace), JSON by its shape: an object with `results.tests` is CTRF, an array of
 * features (objects with `elements`, or `keyword` and `uri`) is Cucumber. Undefined when it is none of them.
 */
export function detectFormat(head: Uint8Array | string): ReportFormat | undefined {
  const text = typeof head === 'string' ? head : decoderFor(head).decoder.decode(head);
  let i = 0;
  while (i < text.length && (text.charCodeAt(i) <= 0x20 || text.charCodeAt(i) === 0xfeff)) {
    i++;
  }
  const first = text[i];
  if (first === '<') {
    return detectXml(text, i);
  }
  if (first === '{' || first === '[') {
    return detectJson(text.slice(i));
  }
  return undefined;
}

function detectXml(text: string, from: number): ReportFormat | undefined {
  let i = from;
  // Skip the prolog: declaration, processing instructions, comments, a doctype.
  while (i < text.length) {
    const open = text.indexOf('<', i);
    if (open === -1) {
      return undefined;
    }
    if (text.startsWith('<?', open)) {
      i = text.indexOf('?>', open);
    } else if (text.startsWith('<!--', open)) {
      i = text.indexOf('-->', open);
    } else if (text.startsWith('<!', open)) {
      i = text.indexOf('>', open);
    } else {
      const nameEnd = /[\s/>]/.exec(text.slice(open + 1, open + 200));
      const name = text.slice(open + 1, open + 1 + (nameEnd ? nameEnd.index : 199));
      const format = formatOfXmlRoot(name);
      if (format === 'trx') {
        const tagEnd = text.indexOf('>', open);
        const tag = text.slice(open, tagEnd === -1 ? text.length : tagEnd);
        return tag.includes(TRX_NAMESPACE) || tagEnd === -1 ? 'trx' : undefined;
      }
      return format;
    }
    if (i === -1) {
      return undefined;
    }
    i++;
  }
  return undefined;
}

function detectJson(text: string): ReportFormat | undefined {
  let rootKind: JsonKind | undefined;
  let ctrf = false;
  let featureKeys = 0;
  let emptyArray = true;
  const FEATURE_ELEMENTS = 1;
  const FEATURE_KEYWORD = 2;
  const FEATURE_URI = 4;
  const stream = new JsonStream({
    select(path: JsonPath, kind: JsonKind) {
      if (path.length === 0) {
        rootKind = kind;
        return 'descend';
      }
      if (rootKind === 'object') {
        if (path.length === 1 && path[0] === 'results' && kind === 'object') {
          return 'descend';
        }
        if (path.length === 1 && path[0] === 'reportFormat') {
          return 'collect';
        }
        if (path.length === 2 && path[1] === 'tests' && kind === 'array') {
          ctrf = true;
        }
        return 'skip';
      }
      emptyArray = false;
      if (path.length === 1) {
        return path[0] === 0 && kind === 'object' ? 'descend' : 'skip';
      }
      featureKeys |=
        path[1] === 'elements'
          ? FEATURE_ELEMENTS
          : path[1] === 'keyword'
            ? FEATURE_KEYWORD
            : path[1] === 'uri'
              ? FEATURE_URI
              : 0;
      return 'skip';
    },
    value(_path: JsonPath, value) {
      ctrf ||= value === 'CTRF';
    },
  });
  try {
    stream.write(text);
  } catch {
    // A head cut anywhere may still have said enough; a malformed one says nothing more.
  }
  if (rootKind === 'object') {
    return ctrf ? 'ctrf' : undefined;
  }
  if (rootKind === 'array') {
    const feature =
      (featureKeys & FEATURE_ELEMENTS) !== 0 ||
      (featureKeys & (FEATURE_KEYWORD | FEATURE_URI)) === (FEATURE_KEYWORD | FEATURE_URI);
    return feature || (emptyArray && stream.done) ? 'cucumber' : undefined;
  }
  return undefined;
}
