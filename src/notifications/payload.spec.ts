import { fitPayload, MAX_BODY_BYTES, signatureLabel } from './payload.js';
import { slackMessage } from './slack-message.js';

describe('Delivery bodies', () => {
  it('lists a failure.new by its first 100 signatures and their count', () => {
    const signatures = Array.from({ length: 5000 }, (_, i) => ({ id: i, testName: `t${i}` }));
    const sut = fitPayload('failure.new', { signatures });
    expect(sut.count).toBe(5000);
    expect((sut.signatures as unknown[]).length).toBe(100);
    expect(sut.truncated).toBeUndefined();
  });

  it('cuts long texts, then lists, until the body fits in 256 KiB', () => {
    const big = fitPayload('test.flaky', { test: { name: 'x', trace: 'y'.repeat(2_000_000) } });
    expect(Buffer.byteLength(JSON.stringify(big))).toBeLessThan(MAX_BODY_BYTES);
    expect(big.truncated).toBe(true);
    const many = fitPayload('test.flaky', {
      items: Array.from({ length: 100_000 }, (_, i) => ({ i, s: 'z'.repeat(300) })),
    });
    expect(Buffer.byteLength(JSON.stringify(many))).toBeLessThan(MAX_BODY_BYTES);
    expect((many.items as unknown[]).length).toBeGreaterThan(100);
  });

  it('names a signature by its test, else its message or key, else its id', () => {
    expect(signatureLabel({ id: 3, testName: 'Cart adds' })).toBe('Cart adds');
    expect(signatureLabel({ id: 3, key: 'NullPointerException at Cart' })).toBe(
      'NullPointerException at Cart',
    );
    expect(signatureLabel({ id: 3 })).toBe('signature 3');
  });

  it('writes a Slack message of a failed run: text, header, counts, gate, new failures and a link, escaped', () => {
    const sut = slackMessage('run.failed', {
      run: {
        id: 42,
        name: 'nightly <b>',
        counts: { total: 10, passed: 7, failed: 2, broken: 1, skipped: 0 },
      },
      gate: { status: 'FAILED' },
      url: 'https://tms.example.com/runs/42',
    });
    expect(sut.text).toBe('Run failed its quality gate: nightly <b> (https://tms.example.com/runs/42)');
    expect(JSON.stringify(sut.blocks)).toContain('*Gate*\\nFAILED');
    expect(JSON.stringify(sut.blocks)).toContain('*Failed*\\n3');
    expect(JSON.stringify(sut.blocks)).toContain('nightly &lt;b&gt;');
    expect(JSON.stringify(sut.blocks)).toContain('<https://tms.example.com/runs/42|Open the run>');
    const fresh = slackMessage('failure.new', { signatures: [{ testName: 'a' }], count: 12 });
    expect(JSON.stringify(fresh.blocks)).toContain('New failures (12)');
    expect(JSON.stringify(fresh.blocks)).toContain('…and 11 more');
  });
});
