import { signatureLabel } from './payload.js';

interface RunLike {
  id?: number | string;
  name?: string;
  counts?: { total?: number; passed?: number; failed?: number; broken?: number; skipped?: number };
  gate?: { status?: string } | null;
  newFailures?: number | null;
}

const HEADLINE: Record<string, string> = {
  'run.finished': 'Run finished',
  'run.failed': 'Run failed its quality gate',
  'failure.new': 'New failures',
  'test.flaky': 'A test turned flaky',
  'test.quarantined': 'A test was quarantined',
  ping: 'Test delivery',
};

/** Slack's mrkdwn escapes: &, < and > (links and mentions are written with them). */
const esc = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * A Slack incoming-webhook message for an event: `text` (the notification's one line) and `blocks`: the run's name,
 * its counts, its gate, its new failures and a link to it, as far as the event carries them.
 */
export function slackMessage(
  type: string,
  data: Record<string, unknown>,
): { text: string; blocks: object[] } {
  const run = data.run as RunLike | undefined;
  const url = typeof data.url === 'string' ? data.url : undefined;
  const gateStatus = (data.gate as { status?: string } | undefined)?.status ?? run?.gate?.status;
  const headline = HEADLINE[type] ?? type;
  const runName = run?.name ?? (run?.id !== undefined ? `run ${run.id}` : undefined);
  const test = data.test as { name?: string; suite?: string } | undefined;
  const subject = runName ? `: ${runName}` : test?.name ? `: ${test.name}` : '';
  const text = `${headline}${subject}`;
  const blocks: object[] = [
    { type: 'header', text: { type: 'plain_text', text: text.slice(0, 150), emoji: true } },
  ];
  if (run?.counts) {
    const c = run.counts;
    blocks.push({
      type: 'section',
      fields: [
        { type: 'mrkdwn', text: `*Run*\n${esc(runName ?? '')}` },
        { type: 'mrkdwn', text: `*Tests*\n${c.total ?? 0}` },
        { type: 'mrkdwn', text: `*Passed*\n${c.passed ?? 0}` },
        { type: 'mrkdwn', text: `*Failed*\n${(c.failed ?? 0) + (c.broken ?? 0)}` },
        { type: 'mrkdwn', text: `*Skipped*\n${c.skipped ?? 0}` },
        { type: 'mrkdwn', text: `*Gate*\n${gateStatus ?? 'not evaluated'}` },
      ],
    });
  }
  if (Array.isArray(data.signatures)) {
    const list = (data.signatures as unknown[]).slice(0, 10);
    const count = typeof data.count === 'number' ? data.count : list.length;
    const lines = list.map((s) => `• ${esc(signatureLabel(s))}`);
    if (count > list.length) {
      lines.push(`…and ${count - list.length} more`);
    }
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: `*New failures (${count})*\n${lines.join('\n')}`.slice(0, 3000) },
    });
  } else if (typeof run?.newFailures === 'number' && run.newFailures > 0) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `*New failures*\n${run.newFailures}` } });
  }
  if (test?.name) {
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: `*Test*\n${esc([test.suite, test.name].filter(Boolean).join(' › '))}` },
    });
  }
  if (type === 'ping' && typeof data.message === 'string') {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: esc(data.message) } });
  }
  if (url) {
    blocks.push({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `<${url}|${run ? 'Open the run' : test ? "Open the test's history" : 'Open'}>`,
      },
    });
  }
  return { text: url ? `${text} (${url})` : text, blocks };
}
