import type { StatusCounts } from '../../results/result-input.js';
import { CtrfParser } from './ctrf.parser.js';
import { CucumberParser } from './cucumber.parser.js';
import { JunitParser } from './junit.parser.js';
import { NunitParser } from './nunit.parser.js';
import type { ParsedResult, ReportFormat, ReportParser, ReportSink } from './report-parser.js';
import { TestngParser } from './testng.parser.js';
import { TrxParser } from './trx.parser.js';
import { XunitParser } from './xunit.parser.js';

/** The streaming parser for `format`, writing into `sink`. */
export function createReportParser(format: ReportFormat, sink: ReportSink): ReportParser {
  switch (format) {
    case 'junit':
      return new JunitParser(sink);
    case 'testng':
      return new TestngParser(sink);
    case 'nunit':
      return new NunitParser(sink);
    case 'xunit':
      return new XunitParser(sink);
    case 'trx':
      return new TrxParser(sink);
    case 'cucumber':
      return new CucumberParser(sink);
    case 'ctrf':
      return new CtrfParser(sink);
  }
}

export interface ParseOutcome {
  format: ReportFormat;
  counts: StatusCounts;
  warnings: string[];
}

/** Results handed on per batch: the writer inserts in batches anyway. */
const BATCH_SIZE = 1000;

/**
 * Parses a report read from `source` (a file stream, a request, an unzip entry), handing its results on in
 * batches of up to `batchSize`. The next chunk is read only once `onResults` has settled, so a slow writer
 * slows the reading instead of piling results up: what is held is one chunk's worth of results at most.
 */
export async function parseReport(
  format: ReportFormat,
  source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  onResults: (results: ParsedResult[]) => Promise<void> | void,
  batchSize = BATCH_SIZE,
): Promise<ParseOutcome> {
  const counts: StatusCounts = { total: 0, passed: 0, failed: 0, broken: 0, skipped: 0 };
  const warnings: string[] = [];
  let batch: ParsedResult[] = [];
  const parser = createReportParser(format, {
    result(result) {
      batch.push(result);
    },
    warning(message) {
      warnings.push(message);
    },
  });
  const flush = async (all: boolean): Promise<void> => {
    while (batch.length >= batchSize || (all && batch.length > 0)) {
      const out = batch.length > batchSize ? batch.slice(0, batchSize) : batch;
      batch = batch.length > batchSize ? batch.slice(batchSize) : [];
      for (const result of out) {
        counts.total++;
        switch (result.status) {
          case 'PASSED':
            counts.passed++;
            break;
          case 'FAILED':
            counts.failed++;
            break;
          case 'BROKEN':
            counts.broken++;
            break;
          case 'SKIPPED':
            counts.skipped++;
            break;
        }
      }
      await onResults(out);
    }
  };
  for await (const chunk of source) {
    parser.write(chunk);
    await flush(false);
  }
  parser.end();
  await flush(true);
  return { format, counts, warnings };
}
