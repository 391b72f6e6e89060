/** One V2 write, exactly as accepted at the door (validated and authorised); processed later by a consumer. */
export type IngestMessage =
  | {
      kind: 'run';
      projectId: string;
      uuid: string;
      name: string;
      startedAt?: string;
      attributes?: Record<string, string>;
      /** Set by the client; else the default rule decides (the runs table's trigger, see migration Streams). */
      stream?: string;
    }
  | { kind: 'results'; projectId: string; runUuid: string; results: IngestResult[] }
  | { kind: 'finish'; projectId: string; runUuid: string; finishedAt?: string };

export interface IngestResult {
  uuid: string;
  testId?: string;
  name: string;
  suite?: string;
  status: 'PASSED' | 'FAILED' | 'BROKEN' | 'SKIPPED';
  durationMs?: number;
  message?: string;
  trace?: string;
  startedAt?: string;
  attributes?: Record<string, string>;
  retry?: number;
}

/**
 * A results message that carries its batch as the exact JSON text the client sent: `{"results":[...]}`, already
 * parsed and validated at the door (the schema admits no other property). It is queued as it came, spliced into
 * the message unparsed, instead of being serialised again; a consumer reads it as the `results` message it
 * stands for (see decodeMessage).
 */
export interface RawResultsMessage {
  kind: 'results';
  projectId: string;
  runUuid: string;
  /** The validated request body, `{"results":[...]}`: its JSON text as UTF-8, as received (any Content-Encoding undone, less a BOM). */
  body: Buffer;
}

/** What the door hands to `publish`. */
export type OutgoingMessage = IngestMessage | RawResultsMessage;

/**
 * A message as queued: JSON text as UTF-8, the same for both queues. A client's body goes in as the bytes it
 * came as (one copy; no decoding and encoding of the batch again).
 */
export function encodeMessage(message: OutgoingMessage): Buffer {
  if ('body' in message) {
    const { projectId, runUuid, body } = message;
    const head = `{"kind":"results","projectId":${JSON.stringify(projectId)},"runUuid":${JSON.stringify(runUuid)},"batch":`;
    return Buffer.concat([Buffer.from(head), body, CLOSE]);
  }
  return Buffer.from(JSON.stringify(message));
}

const CLOSE = Buffer.from('}');

/**
 * A queued message back as the handler takes it; undefined when the text is not a JSON object with a kind (such
 * a message can never succeed). A spliced batch's result UUIDs are lower-cased here, as the door answered them.
 */
export function decodeMessage(text: string): IngestMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object' || typeof (value as { kind?: unknown }).kind !== 'string') {
    return undefined;
  }
  const { kind, projectId, runUuid, batch } = value as {
    kind: string;
    projectId: string;
    runUuid: string;
    batch?: { results?: unknown };
  };
  if (kind !== 'results' || batch === undefined) {
    return value as IngestMessage;
  }
  if (!batch || !Array.isArray(batch.results)) {
    return undefined;
  }
  const results = batch.results as IngestResult[];
  for (const result of results) {
    if (typeof result?.uuid === 'string') {
      result.uuid = result.uuid.toLowerCase();
    }
  }
  return { kind, projectId, runUuid, results };
}

/**
 * Processes a batch of messages in one database transaction. Throwing fails the whole batch; the queue then
 * retries its messages one by one, so one bad message cannot hold the others back. Handlers are idempotent
 * (by UUID): a message delivered twice changes nothing the second time.
 */
export type BatchHandler = (messages: IngestMessage[]) => Promise<void>;

export interface ConsumeOptions {
  /** Messages taken from the queue at once and handed to one handler call. */
  batchSize: number;
  /** Tries per message before it goes to the dead-letter queue. */
  maxAttempts: number;
  /**
   * Batches this replica handles at once (default 1). Two let the database store one batch while this process
   * prepares the next; the handler must then be safe to run concurrently (IngestV2Processor locks per run).
   */
  concurrency?: number;
}

/**
 * The V2 ingest queue: RabbitMQ (durable queue, persistent messages, publisher confirms) when
 * SVC_BROKER_AMQP_URL is set, otherwise a PostgreSQL table polled with FOR UPDATE SKIP LOCKED. Either way,
 * `publish` resolves only once the message is durably stored: a 202 means it will be processed.
 */
export abstract class IngestQueue {
  abstract readonly kind: 'rabbitmq' | 'postgres';

  /** Stores the message durably; rejects with AppError UNAVAILABLE (503) when the queue cannot take it. */
  abstract publish(message: OutgoingMessage): Promise<void>;

  /** Starts this replica's consumer; competing consumers in every replica share the work. */
  abstract consume(handler: BatchHandler, options: ConsumeOptions): Promise<void>;

  /** Whether publishing can succeed now (readiness). */
  abstract isReady(): Promise<boolean>;

  /** Messages moved to the dead-letter queue by this replica since it started (for /metrics). */
  abstract deadLettered(): number;

  /** Messages waiting to be taken (not those being handled); NaN while the queue cannot be asked. */
  abstract depth(): Promise<number>;

  abstract close(): Promise<void>;
}
