import type { GateCondition, GateStatus } from '../api/client';

const WORDS: Record<GateStatus, string> = {
  PASSED: 'Gate passed',
  FAILED: 'Gate failed',
  PENDING: 'Gate pending',
  OFF: 'Gate off',
};

/** The quality gate's verdict as a badge: a mark and a word, so that it reads without its colour. */
export function GateBadge({ status, short = false }: { status: GateStatus; short?: boolean }) {
  const mark = status === 'PASSED' ? '✓' : status === 'FAILED' ? '✗' : status === 'PENDING' ? '…' : '–';
  return (
    <span className={`gate-badge gate-${status.toLowerCase()}`} title={WORDS[status]}>
      <span aria-hidden="true">{mark} </span>
      {short ? (
        <>
          <span className="visually-hidden">Gate </span>
          {status === 'PASSED' ? 'gate' : status === 'FAILED' ? 'gate failed' : status.toLowerCase()}
        </>
      ) : (
        WORDS[status]
      )}
    </span>
  );
}

/** A condition's name in words. */
export const CONDITION_TITLES: Record<GateCondition['name'], string> = {
  maxFailed: 'Failed tests',
  minPassRate: 'Pass rate',
  minTotal: 'Tests run',
  noNewFailures: 'New failures',
};

/** "66.66 %", its sign never on a line of its own (a non-breaking space). */
const percent = (value: number) => `${value.toLocaleString(undefined, { maximumFractionDigits: 2 })}\u00a0%`;

/** What a condition asks for, in words: "at most 0", "at least 95 %", "none". */
export function expectedOf(c: Pick<GateCondition, 'name' | 'expected'>): string {
  switch (c.name) {
    case 'maxFailed':
      return c.expected === 0 ? 'none' : `at most ${c.expected.toLocaleString()}`;
    case 'minPassRate':
      return `at least ${percent(c.expected)}`;
    case 'minTotal':
      return `at least ${c.expected.toLocaleString()}`;
    case 'noNewFailures':
      return 'none';
  }
}

/** What the run had, in words: "3", "66.66 %", "no rate (nothing passed or failed)". */
export function actualOf(c: Pick<GateCondition, 'name' | 'actual'>): string {
  if (c.actual === null) {
    return 'none (nothing passed or failed)';
  }
  return c.name === 'minPassRate' ? percent(c.actual) : c.actual.toLocaleString();
}
