import type { ResultInput } from '../../results/result-input.js';

/** The formats `POST /api/import/{format}` takes (besides `auto`, which detect.ts resolves to one of them). */
export const REPORT_FORMATS = ['junit', 'testng', 'nunit', 'xunit', 'trx', 'cucumber', 'ctrf'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export function isReportFormat(value: string): value is ReportFormat {
  return (REPORT_FORMATS as readonly string[]).includes(value);
}

/**
 * One test result as a parser hands it on: the writer's ResultInput (src/results/result-input.ts) without the
 * ids, already within the writer's limits, so the import never fails on a value after parsing succeeded. Its
 * startedAt has Z or an offset: a report's local time without an offset is left out rather than guessed.
 */
export type ParsedResult = Omit<ResultInput, 'uuid' | 'testId'>;

/**
 * Where a parser puts what it finds. Results arrive one at a time, while `write` runs; warnings (one line per
 * kind, with a count) arrive at `end`.
 */
export interface ReportSink {
  result(result: ParsedResult): void;
  warning(message: string): void;
}

/** A streaming parser for one report: bytes in through `write`, results out through its sink. */
export interface ReportParser {
  readonly format: ReportFormat;
  write(chunk: Uint8Array | string): void;
  /** Finishes the report: throws if it was cut short, then flushes the warnings. */
  end(): void;
}

/**
 * MALFORMED: not well-formed XML/JSON, or a required part is broken (400). WRONG_FORMAT: a report, but of another
 * format or of none (422). LIMIT: beyond what the import accepts, such as nesting deeper than MAX_DEPTH (413).
 */
export type ReportErrorKind = 'MALFORMED' | 'WRONG_FORMAT' | 'LIMIT';

export class ReportError extends Error {
  constructor(
    readonly kind: ReportErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'ReportError';
  }
}

/**
 * What a parser's write or end threw: the parser's state after it is undefined, so every later call throws it
 * again.
 */
export class StickyFailure {
  private failure: Error | undefined;

  /** Runs `step`, unless an earlier step threw: then throws that again instead. */
  run(step: () => void): void {
    if (this.failure !== undefined) {
      throw this.failure;
    }
    try {
      step();
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    }
  }
}

// Limits. Parsing keeps no more than these per element, so memory stays bounded whatever the file size.
/** XML elements or JSON containers nested deeper than this are refused: no report format needs more. */
export const MAX_DEPTH = 64;
/** Attributes on one XML element. */
export const MAX_ELEMENT_ATTRIBUTES = 256;
/** A result's message and trace, each; longer text is cut (with a warning), never refused. */
export const MAX_TEXT_CHARS = 65_536;
/** Captured output (JUnit system-out/system-err and the like), each, appended to the trace. */
export const MAX_OUTPUT_CHARS = 65_536;
/** varchar(1000) of results.name and test_cases.name (src/results/entities.ts). */
export const MAX_NAME_CHARS = 1000;
/** varchar(1000) of results.suite and test_cases.suite. */
export const MAX_SUITE_CHARS = 1000;
/** The writer's limits on a result's attributes (results-batch.validator.ts). */
export const MAX_RESULT_ATTRIBUTES = 50;
export const MAX_ATTRIBUTE_KEY_CHARS = 100;
export const MAX_ATTRIBUTE_VALUE_CHARS = 1000;
export const MAX_DURATION_MS = 31_536_000_000;
export const MAX_RETRY = 1000;
/**
 * One raw token held while parsing (an XML text run, attribute value, comment or CDATA section; a JSON string):
 * longer ones are cut as they stream in, before a parser gathers them, so a 250 MB attribute value costs 128 KiB,
 * not 250 MB. Twice MAX_TEXT_CHARS and a margin: a text that was cut is still longer than MAX_TEXT_CHARS code
 * points (an entity reference, CR LF or a surrogate pair is at most two of these characters for one of those), so
 * the emitter cuts it again and says so.
 */
export const MAX_TOKEN_CHARS = 2 * MAX_TEXT_CHARS + 64;
/** One JSON value collected whole (a CTRF test, a Cucumber step), its strings already cut to MAX_TOKEN_CHARS. */
export const MAX_COLLECT_CHARS = 8 * 1_048_576;
