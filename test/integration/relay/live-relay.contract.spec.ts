import { randomBytes } from 'node:crypto';
import { InProcessRelay } from '../../../src/infra/relay/in-process.relay.js';
import { LiveEvent, LiveRelay } from '../../../src/infra/relay/live-relay.js';
import { StompRelay } from '../../../src/infra/relay/stomp.relay.js';
import { restartStompPlugin } from '../../support/live.js';
import { TEST_STOMP_HOST, TEST_STOMP_PORT } from '../../support/services.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Received {
  events: LiveEvent[];
  resyncs: number;
}

function listenTo(relay: LiveRelay): Received {
  const received: Received = { events: [], resyncs: 0 };
  relay.listen({ event: (e) => received.events.push(e), resync: () => received.resyncs++ });
  return received;
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error('timed out');
    }
    await sleep(20);
  }
}

const event = (projectId: string, n: number): LiveEvent => ({
  projectId,
  event: 'results.added',
  data: { runId: n, counts: { total: n, passed: n, failed: 0, broken: 0, skipped: 0 } },
  at: new Date().toISOString(),
});

/**
 * One contract, both adapters. `replicas` makes the relays of one deployment: the embedded relay serves one
 * process, so it makes one; the STOMP relay, one per replica on a topic of the test's own.
 */
describe.each([
  ['in-process', (): LiveRelay[] => [new InProcessRelay()]],
  [
    'stomp',
    (): LiveRelay[] => {
      const topic = `test-${randomBytes(4).toString('hex')}.relay`;
      const settings = {
        host: TEST_STOMP_HOST,
        port: Number(TEST_STOMP_PORT),
        login: 'guest',
        passcode: 'guest',
      };
      return [new StompRelay(settings, topic), new StompRelay(settings, topic)];
    },
  ],
])('LiveRelay contract: %s', (name, make: () => LiveRelay[]) => {
  let relays: LiveRelay[];
  let received: Received[];

  beforeAll(async () => {
    relays = make();
    received = relays.map(listenTo);
    await Promise.all(relays.map((r) => (r instanceof StompRelay ? r.start() : Promise.resolve())));
  });
  afterAll(async () => {
    await Promise.all(relays.map((r) => r.close()));
  });
  beforeEach(() => received.forEach((r) => r.events.splice(0)));

  it('is ready once started', () => {
    expect(relays.every((r) => r.isReady())).toBe(true);
  });

  it("hands every event to every replica's listener exactly once, the publisher's own included, in order", async () => {
    const sent = Array.from({ length: 20 }, (_, i) => event(String(1 + (i % 3)), i));
    sent.forEach((e, i) => relays[i % relays.length].publish(e));
    await until(() => received.every((r) => r.events.length >= sent.length));
    await sleep(200);
    for (const r of received) {
      expect(r.events).toHaveLength(sent.length);
      // Order holds per publisher (the broker keeps it per connection); all of them arrive.
      expect([...r.events].sort((x, y) => Number(x.data.runId) - Number(y.data.runId))).toEqual(sent);
    }
  });

  it('does not hand an event back before publish returns (delivery is never re-entrant)', async () => {
    let inside = false;
    let reentered = false;
    relays[0].listen({
      event: () => {
        reentered ||= inside;
      },
      resync: () => undefined,
    });
    inside = true;
    relays[0].publish(event('9', 1));
    inside = false;
    await sleep(300);
    expect(reentered).toBe(false);
    received[0] = listenTo(relays[0]);
  });

  if (name === 'stomp') {
    it('reconnects after the broker drops it, tells its listener to resync, and relays again', async () => {
      const resyncsBefore = received.map((r) => r.resyncs);
      await restartStompPlugin();
      await until(() => received.every((r, i) => r.resyncs > resyncsBefore[i]), 15_000);
      await until(() => relays.every((r) => r.isReady()));
      relays[1].publish(event('4', 99));
      await until(() => received.every((r) => r.events.some((e) => e.data.runId === 99)));
    });

    it('is not ready, and loses what is published, while it cannot reach the broker; publish never throws', async () => {
      const unreachable = new StompRelay({ host: '127.0.0.1', port: 1 }, 'test.unreachable');
      try {
        await unreachable.start(300);
        expect(unreachable.isReady()).toBe(false);
        expect(() => unreachable.publish(event('1', 1))).not.toThrow();
      } finally {
        await unreachable.close();
      }
    });
  }
});
