/**
 * The summary of a run as text (a CI log), Markdown ($GITHUB_STEP_SUMMARY, a merge-request comment) or JSON (a
 * script). Each shows the same facts: counts and pass rate, the gate with its conditions, new failures (top 10 with
 * their message), flaky and quarantined tests that ran, and the run's address.
 */

/** @typedef {import('./summary.js').Summary} Summary */
/** @typedef {import('./summary.js').Gate} Gate */

/** @param {number | null} rate 0..1, shown with one decimal, rounded down so that 99.96 % never shows as 100 % */
export function percent(rate) {
  return rate === null ? 'n/a' : `${(Math.floor(rate * 1000) / 10).toFixed(1)}%`;
}

/** A message's first line, cut to `max` characters. @param {string | null | undefined} message @param {number} [max] */
function firstLine(message, max = 200) {
  const line = (message ?? '').split(/\r?\n/).find((l) => l.trim()) ?? '';
  const chars = [...line.trim()];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : chars.join('');
}

/** @param {{suite: string, name: string}} test */
const fullName = (test) => (test.suite ? `${test.suite} › ${test.name}` : test.name);

/** @param {unknown} value a condition's expected or actual value */
function value(value) {
  if (value === null || value === undefined) {
    return '–';
  }
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** @param {unknown} value a count, or a list of what was ignored */
const countOf = (value) => (Array.isArray(value) ? value.length : Number(value) || 0);

/** @param {Gate['ignored']} ignored results the gate did not count, and why */
function ignoredLine(ignored) {
  const quarantined = countOf(ignored?.quarantined);
  const known = countOf(ignored?.knownIssues);
  const parts = [];
  if (quarantined) {
    parts.push(`${quarantined} result${quarantined === 1 ? '' : 's'} of quarantined tests`);
  }
  if (known) {
    parts.push(`${known} of known issues`);
  }
  return parts.length ? `Not counted: ${parts.join(', ')}` : '';
}

/** @param {Record<string, number>} c */
function countsLine(c) {
  const parts = [`${c.passed} passed`, `${c.failed} failed`, `${c.broken} broken`, `${c.skipped} skipped`];
  if (c.passedOnRetry) {
    parts.push(`${c.passedOnRetry} passed on retry`);
  }
  return `${c.total} test${c.total === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

/** @param {Summary} s */
export function renderText(s) {
  const lines = [`Run ${s.run.id}: ${s.run.name}${s.run.status === 'FINISHED' ? '' : ` (${s.run.status})`}`];
  lines.push(`  ${countsLine(s.run.counts)}; pass rate ${percent(s.run.passRate)}`);
  if (!s.gate) {
    lines.push('Gate: not available (the service has no quality gate)');
  } else {
    lines.push(`Gate: ${s.gate.status}`);
    for (const c of s.gate.conditions ?? []) {
      lines.push(
        `  ${c.passed ? 'ok  ' : 'FAIL'} ${c.name}: expected ${value(c.expected)}, actual ${value(c.actual)}`,
      );
    }
    const ignored = ignoredLine(s.gate.ignored);
    if (ignored) {
      lines.push(`  ${ignored}`);
    }
  }
  const nf = s.newFailures;
  if (nf.total) {
    lines.push(
      nf.compared ? `New failures: ${nf.total}` : `Failures (no run before in its stream): ${nf.total}`,
    );
    for (const t of nf.tests) {
      const message = firstLine(t.message);
      lines.push(`  ${t.status} ${fullName(t)}${message ? `: ${message}` : ''}`);
    }
    if (nf.total > nf.tests.length) {
      lines.push(`  … and ${nf.total - nf.tests.length} more`);
    }
  } else {
    lines.push(nf.compared ? 'New failures: none' : 'Failures: none');
  }
  for (const [label, list] of /** @type {const} */ ([
    ['Flaky tests that ran', s.flaky],
    ['Quarantined tests that ran', s.quarantined],
  ])) {
    if (!list.available) {
      lines.push(`${label}: not available`);
    } else if (list.tests.length) {
      lines.push(`${label}: ${list.tests.length}`);
      list.tests.forEach((t) => lines.push(`  ${fullName(t)}`));
    }
  }
  lines.push(`Run: ${s.run.url}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Text as Markdown shows it literally: the characters that would start emphasis, code, links, a table cell or
 * HTML are escaped, and it stays on one line (it never starts a line, so list and heading marks are harmless).
 * @param {string} text
 */
export function md(text) {
  return text
    .replace(/[\r\n]+/g, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[\\`*_[\]|~]/g, (c) => `\\${c}`);
}

const GATE_ICON = { PASSED: '✅', FAILED: '❌', PENDING: '⏳', OFF: '⚪' };

/** @param {Summary} s */
export function renderMarkdown(s) {
  const c = s.run.counts;
  const out = [];
  const gate = s.gate ? `${GATE_ICON[s.gate.status] ?? ''} gate ${s.gate.status}` : 'gate not available';
  out.push(`### ${md(s.run.name)}: ${gate}`, '');
  out.push('| Tests | Passed | Failed | Broken | Skipped | Pass rate |');
  out.push('| ---: | ---: | ---: | ---: | ---: | ---: |');
  out.push(
    `| ${c.total} | ${c.passed} | ${c.failed} | ${c.broken} | ${c.skipped} | ${percent(s.run.passRate)} |`,
    '',
  );
  if (s.run.status !== 'FINISHED') {
    out.push(`The run is ${s.run.status}.`, '');
  }
  if (s.gate?.conditions?.length) {
    out.push('| Gate condition | Expected | Actual | |', '| --- | ---: | ---: | --- |');
    for (const cond of s.gate.conditions) {
      out.push(
        `| ${md(cond.name)} | ${md(value(cond.expected))} | ${md(value(cond.actual))} | ${cond.passed ? '✅' : '❌'} |`,
      );
    }
    out.push('');
    const ignored = ignoredLine(s.gate.ignored);
    if (ignored) {
      out.push(`${ignored}.`, '');
    }
  }
  const nf = s.newFailures;
  if (nf.total) {
    out.push(
      nf.compared
        ? `**New failures: ${nf.total}**`
        : `**Failures: ${nf.total}** (no run before in its stream)`,
      '',
    );
    for (const t of nf.tests) {
      const message = firstLine(t.message);
      out.push(
        `- ${t.status === 'BROKEN' ? '💥' : '❌'} ${md(fullName(t))}${message ? `: ${md(message)}` : ''}`,
      );
    }
    if (nf.total > nf.tests.length) {
      out.push(`- … and ${nf.total - nf.tests.length} more`);
    }
    out.push('');
  } else {
    out.push(nf.compared ? 'No new failures.' : 'No failures.', '');
  }
  for (const [label, list] of /** @type {const} */ ([
    ['Flaky tests that ran', s.flaky],
    ['Quarantined tests that ran', s.quarantined],
  ])) {
    if (!list.available) {
      out.push(`${label}: not available.`, '');
    } else if (list.tests.length) {
      out.push(`**${label}: ${list.tests.length}**`, '');
      list.tests.forEach((t) => out.push(`- ${md(fullName(t))}`));
      out.push('');
    }
  }
  out.push(`[Run ${s.run.id} in the test management service](${s.run.url})`);
  return `${out.join('\n')}\n`;
}

/** @param {Summary} s */
export function renderJson(s) {
  return `${JSON.stringify(s, null, 2)}\n`;
}

/**
 * @param {Summary} s
 * @param {string} format text | markdown | json
 */
export function render(s, format) {
  return format === 'markdown' ? renderMarkdown(s) : format === 'json' ? renderJson(s) : renderText(s);
}

/**
 * The gate alone, as `tms gate` prints it.
 * @param {number} runId
 * @param {Gate} gate
 */
export function renderGate(runId, gate) {
  const lines = [`Gate of run ${runId}: ${gate.status}`];
  for (const c of gate.conditions ?? []) {
    lines.push(
      `  ${c.passed ? 'ok  ' : 'FAIL'} ${c.name}: expected ${value(c.expected)}, actual ${value(c.actual)}`,
    );
  }
  const ignored = ignoredLine(gate.ignored);
  if (ignored) {
    lines.push(`  ${ignored}`);
  }
  return `${lines.join('\n')}\n`;
}
