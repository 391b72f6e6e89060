/**
 * The one definition of a failure's signature (API.md, "Failure triage across runs"): what a failing result's
 * message says once the parts that differ between otherwise equal failures are stripped, plus the first frame of its
 * trace that is not a test framework's, the runtime's or a dependency's, stripped of line numbers. The run's failure
 * groups and the project's signatures are both this key (the results writer stores each failing result's signature,
 * see triage.observer.ts): one broken dependency shows as one group of 300 failures and as one signature with its
 * history, never as two things that drift apart.
 *
 * The message, of its first 2000 characters, in this order (as failure_key() in SQL did before it): UUIDs become
 * `<id>`; temporary paths (/tmp, /var/tmp, macOS's /var/folders, Windows' …\Temp\…) `<tmp>`; ISO dates and times
 * `<time>`; hexadecimal ids `<id>` (`0x…`, a hex word that starts with a digit and holds a letter, or one of six or
 * more characters that starts with a letter and holds a digit, so `e2e` and `b64` stay); numbers that do not continue
 * a word `<n>` (dotted ones whole: `opentest4j`, `getLine2()`, `utf8` stay); runs of white space one space. The message
 * part keeps 300 characters, the frame 200; an empty message is `(no message)`.
 */

const MESSAGE_CHARS = 2000;
const MESSAGE_KEY_CHARS = 300;
const FRAME_KEY_CHARS = 200;
/** Trace lines looked at for a frame: the frame sought is near the top, and a trace may hold 64 KiB. */
const TRACE_LINES = 200;
export const NO_MESSAGE = '(no message)';
/** Between the message and the frame in a key. */
export const FRAME_SEPARATOR = ' @ ';

// Word characters, ASCII (as \w): a Unicode class in the look-behinds made the normaliser several times slower,
// and a number is seldom written right after a non-ASCII letter.
const W = '\\w';
const UUID = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/g;
const TMP =
  /(\/private)?(\/tmp|\/var\/tmp|\/var\/folders)(\/[^\s'":,;)\]]*)?|[A-Za-z]:\\[^\s'":;]*\\Temp(\\[^\s'":;]*)?/g;
const TIME = new RegExp(
  `(?<!${W})\\d{4}-\\d\\d-\\d\\d([T ]\\d\\d:\\d\\d(:\\d\\d([.,]\\d+)?)?(Z|[+-]\\d\\d(:?\\d\\d)?)?)?`,
  'g',
);
const HEX = new RegExp(
  `(?<!${W})(0x[0-9a-fA-F]+|\\d[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*|(?=[0-9a-fA-F]{6})[a-fA-F][0-9a-fA-F]*\\d[0-9a-fA-F]*)(?!${W})`,
  'g',
);
const NUMBER = new RegExp(`(?<!${W})\\d+(\\.\\d+)*`, 'g');
const SPACE = /\s+/g;
const DIGIT = /\d/;
// Terminal colours (Playwright's and Jest's messages carry them in reports).
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

/** The stripped message alone (a failure without a trace, or the message part of a key). */
export function normaliseMessage(message: string | null | undefined): string {
  const text = stripVolatile((message ?? '').slice(0, MESSAGE_CHARS));
  return text ? text.slice(0, MESSAGE_KEY_CHARS) : NO_MESSAGE;
}

function stripVolatile(text: string): string {
  // Each pattern only where it may match (the write path keys every failing result).
  if (text.includes('\u001b')) {
    text = text.replace(ANSI, '');
  }
  const dashed = text.includes('-');
  if (dashed) {
    text = text.replace(UUID, '<id>');
  }
  if (text.includes('/tmp') || text.includes('/var/') || text.includes('\\Temp')) {
    text = text.replace(TMP, '<tmp>');
  }
  if (DIGIT.test(text)) {
    if (dashed) {
      text = text.replace(TIME, '<time>');
    }
    text = text.replace(HEX, '<id>').replace(NUMBER, '<n>');
  }
  return text.replace(SPACE, ' ').trim();
}

/**
 * Frames of code that is not the project's own: the runtime, test frameworks, assertion and mocking libraries,
 * build tools, and dependencies (node_modules, site-packages). Java/Kotlin/Scala classes by package, .NET by
 * namespace, JavaScript and Python by path, Go by package.
 */
const FRAMEWORK_CLASS =
  /^(java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala|groovy|org\.codehaus\.groovy|org\.junit|junit|org\.testng|org\.opentest4j|org\.assertj|org\.hamcrest|org\.mockito|org\.easymock|org\.spockframework|org\.gradle|worker\.org\.gradle|org\.apache\.maven|org\.apache\.tools\.ant|com\.intellij|org\.jetbrains|net\.bytebuddy|org\.springframework\.test|io\.kotest|io\.cucumber|cucumber|com\.google\.common\.truth|org\.eclipse\.jdt|System|Microsoft|NUnit|Xunit|xunit|MSTest|Castle|Moq|FluentAssertions|Shouldly|NSubstitute|testing|runtime|reflect|github\.com\/stretchr|gotest\.tools)[./(]/;
const FRAMEWORK_PATH =
  /node_modules[\\/]|^node:|^internal[\\/]|[\\/]internal[\\/](modules|process|timers)|site-packages[\\/]|dist-packages[\\/]|[\\/]lib[\\/]python\d[\d.]*[\\/]|[\\/]_pytest[\\/]|[\\/]pluggy[\\/]|[\\/]unittest[\\/]|^<|[\\/]go[\\/]src[\\/](testing|runtime|reflect)[\\/]|[\\/]usr[\\/]lib[\\/]|[\\/]usr[\\/]local[\\/]lib[\\/]/;

interface Frame {
  /** The frame as it goes into the key: code location without line or column numbers. */
  text: string;
  framework: boolean;
}

/** A path's last segment: where a checkout lives differs between machines, the file does not. */
function fileName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
}

// Java, Kotlin, Scala, Groovy: `at com.acme.Cart.total(Cart.java:42)`, `at app//com.acme.Cart.total(Cart.kt:9)`.
const JAVA = /^\s*at\s+(?:[\w.-]+\/\/?)?([\w$.<>/-]+)\(([^():]*)(?::\d+)?\)\s*$/;
// .NET: `at Acme.Cart.Total(Int32 n) in C:\src\Cart.cs:line 42`, or without the ` in …` part.
const DOTNET = /^\s*at\s+([\w.`<>[\]+$-]+)\((.*?)\)(?:\s+in\s+(.+?)(?::line\s+\d+)?)?\s*$/;
// JavaScript (V8): `at Object.<anonymous> (/src/cart.test.js:10:5)`, `at /src/cart.js:3:9`, `at async fn (file:…)`.
const JS_NAMED = /^\s*at\s+(?:async\s+)?(.+?)\s+\((.+?)(?::\d+)?(?::\d+)?\)\s*$/;
const JS_BARE = /^\s*at\s+(?:async\s+)?((?:file:\/\/|node:|\/|[A-Za-z]:\\)[^\s]+?)(?::\d+)?(?::\d+)?\s*$/;
// Firefox / Safari style: `total@http://host/cart.js:10:5`.
const JS_AT = /^\s*([\w$.<>/]*)@(.+?)(?::\d+)?(?::\d+)?\s*$/;
// Python: `File "/src/tests/test_cart.py", line 12, in test_total`.
const PYTHON = /^\s*File\s+"(.+?)",\s+line\s+\d+(?:,\s+in\s+(.+?))?\s*$/;
// pytest's short form: `tests/test_cart.py:12: in test_total` or `tests/test_cart.py:12: AssertionError`.
const PYTEST = /^([^\s:]+\.py):\d+:\s+(?:in\s+)?(\S+)/;
// Go: `    cart_test.go:42: expected 3, got 4` (t.Errorf), and a panic's `\t/src/cart.go:42 +0x1d` under its function.
const GO_LOG = /^\s*([\w.-]+_test\.go):\d+:/;
const GO_FILE = /^\s+(\S+\.go):\d+(?:\s+\+0x[0-9a-f]+)?\s*$/;
// Ruby: `./features/step_definitions/cart_steps.rb:12:in `block in <top (required)>'`.
const RUBY = /^\s*(?:from\s+)?(\S+\.rb):\d+:in\s+[`'](.+)'/;
const GO_FUNC = /^([\w./-]+\.[\w.()*]+)\(.*\)\s*$/;

/**
 * The frames of a trace, innermost first (Python's tracebacks, innermost last, are turned around); with `untilOwn`,
 * only as far as the first that is not a framework's (the write path reads no further).
 */
export function framesOf(trace: string, untilOwn = false): Frame[] {
  const lines = trace.split(/\r?\n/, TRACE_LINES);
  const frames: Frame[] = [];
  const python: Frame[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (untilOwn && frames.length && !frames[frames.length - 1].framework) {
      return frames;
    }
    // Most lines of a message or a log are no frame: the patterns below are tried only on those that may be one.
    if (
      !line.includes('at ') &&
      !line.includes('File "') &&
      !line.includes('@') &&
      !/\.(py|rb|go):/.test(line) &&
      !(i + 1 < lines.length && lines[i + 1].includes('.go:'))
    ) {
      continue;
    }
    let m: RegExpExecArray | null;
    if (
      (m = JAVA.exec(line)) &&
      !line.includes(' in ') &&
      /\.(java|kt|kts|scala|groovy)$|^(Native Method|Unknown Source)$|^$/.test(m[2])
    ) {
      const cls = m[1];
      frames.push({
        text: `${cls}(${m[2]})`,
        framework: FRAMEWORK_CLASS.test(cls) || m[2] === 'Native Method',
      });
    } else if (
      (m = DOTNET.exec(line)) &&
      !/[\\/:]/.test(m[1]) &&
      (m[3] !== undefined || !/[\\/]/.test(m[2]))
    ) {
      const method = m[1];
      const file = m[3] ? ` (${fileName(m[3])})` : '';
      frames.push({ text: `${method}(${m[2] ? '…' : ''})${file}`, framework: FRAMEWORK_CLASS.test(method) });
    } else if ((m = JS_NAMED.exec(line))) {
      const path = m[2];
      frames.push({
        text: `${m[1]} (${fileName(path)})`,
        framework: FRAMEWORK_PATH.test(path) || path === 'native' || path === '<anonymous>',
      });
    } else if ((m = JS_BARE.exec(line))) {
      frames.push({ text: fileName(m[1]), framework: FRAMEWORK_PATH.test(m[1]) });
    } else if ((m = PYTHON.exec(line))) {
      python.push({
        text: `${fileName(m[1])}${m[2] ? ` in ${m[2]}` : ''}`,
        framework: FRAMEWORK_PATH.test(m[1]),
      });
    } else if ((m = PYTEST.exec(line))) {
      python.push({ text: `${fileName(m[1])}`, framework: FRAMEWORK_PATH.test(`/${m[1]}`) });
    } else if ((m = RUBY.exec(line))) {
      frames.push({
        text: `${fileName(m[1])} in ${m[2]}`,
        framework: FRAMEWORK_PATH.test(m[1]) || /[\\/]gems[\\/]/.test(m[1]),
      });
    } else if ((m = GO_LOG.exec(line))) {
      frames.push({ text: m[1], framework: false });
    } else if ((m = GO_FUNC.exec(line)) && i + 1 < lines.length && GO_FILE.test(lines[i + 1])) {
      const file = GO_FILE.exec(lines[i + 1])![1];
      const fn = m[1].replace(/^([\w.-]+\/)*/, (prefix) =>
        prefix.startsWith('github.com/stretchr') ? prefix : '',
      );
      frames.push({
        text: `${fn} (${fileName(file)})`,
        framework: FRAMEWORK_CLASS.test(m[1]) || FRAMEWORK_PATH.test(file),
      });
      i++;
    } else if ((m = JS_AT.exec(line)) && /[/\\]/.test(m[2])) {
      frames.push({
        text: `${m[1] || '<anonymous>'} (${fileName(m[2])})`,
        framework: FRAMEWORK_PATH.test(m[2]),
      });
    }
  }
  return frames.length ? frames : python.reverse();
}

/** The first frame of the trace that is none of a framework's, stripped; null when there is none. */
export function firstOwnFrame(trace: string | null | undefined): string | null {
  if (!trace) {
    return null;
  }
  const frame = framesOf(trace, true).find((f) => !f.framework);
  if (!frame) {
    return null;
  }
  // Numbers left in a frame are generated names (lambda$3, <lambda>b__0_1, closure #2), which change with code around.
  const text = stripVolatile(frame.text).slice(0, FRAME_KEY_CHARS);
  return text || null;
}

/** The first line of a trace that is no frame, or undefined. */
function headline(trace: string | null | undefined): string | undefined {
  const line = trace
    ?.slice(0, MESSAGE_CHARS)
    .split(/\r?\n/)
    .find((l) => /\S/.test(l));
  return line !== undefined && framesOf(line).length === 0 ? line : undefined;
}

/** A failing result's signature key: the stripped message, and its first own frame when the trace has one. */
export function failureKey(message: string | null | undefined, trace: string | null | undefined): string {
  const frame = firstOwnFrame(trace);
  // Without a message, the trace's first line says what failed (JUnit's reports often put it there alone).
  const text = normaliseMessage(message?.trim() ? message : headline(trace));
  return frame ? `${text}${FRAME_SEPARATOR}${frame}` : text;
}
