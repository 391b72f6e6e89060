import { randomUUID } from 'node:crypto';
import { decodeMessage, encodeMessage, type IngestMessage } from './ingest-queue.js';

describe('ingest message codec', () => {
  it('round-trips every message kind', () => {
    const messages: IngestMessage[] = [
      { kind: 'run', projectId: '1', uuid: randomUUID(), name: 'nightly', attributes: { branch: 'main' } },
      {
        kind: 'results',
        projectId: '1',
        runUuid: randomUUID(),
        results: [{ uuid: randomUUID(), name: 't', status: 'FAILED', message: 'x\ny' }],
      },
      { kind: 'finish', projectId: '1', runUuid: randomUUID(), finishedAt: '2026-11-23T10:00:00.000Z' },
    ];
    for (const message of messages) {
      expect(decodeMessage(encodeMessage(message).toString())).toEqual(message);
    }
  });

  it('splices a client body in unparsed and reads it back as a results message with lower-case UUIDs', () => {
    const runUuid = randomUUID();
    const upper = randomUUID().toUpperCase();
    const body = `\n{ "results": [\n  {"uuid": "${upper}", "name": "quote \\" and \\u00e9", "status": "SKIPPED", "attributes": {"os": "linux"}}\n] }\n`;
    const bytes = encodeMessage({ kind: 'results', projectId: '42', runUuid, body: Buffer.from(body) });
    const text = bytes.toString();

    expect(bytes.includes(Buffer.from(body))).toBe(true); // as sent, not serialised again
    expect(decodeMessage(text)).toEqual({
      kind: 'results',
      projectId: '42',
      runUuid,
      results: [
        { uuid: upper.toLowerCase(), name: 'quote " and é', status: 'SKIPPED', attributes: { os: 'linux' } },
      ],
    });
  });

  it('quotes the ids it writes itself', () => {
    const text = encodeMessage({
      kind: 'results',
      projectId: '1"}',
      runUuid: 'r',
      body: Buffer.from('{"results":[]}'),
    }).toString();
    expect(decodeMessage(text)).toEqual({ kind: 'results', projectId: '1"}', runUuid: 'r', results: [] });
  });

  it('reads nothing from text that is not a JSON message', () => {
    for (const text of [
      '',
      'nope',
      '[1,2]',
      '{"projectId":"1"}',
      '{"kind":3}',
      '{"kind":"results","batch":{"results":{}}}',
      '{"kind":"results","batch":null}',
    ]) {
      expect(decodeMessage(text)).toBeUndefined();
    }
  });
});
