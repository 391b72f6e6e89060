import { AsyncLocalStorage } from 'node:async_hooks';
import type { NextFunction, Request, Response } from 'express';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { QUERY_CANCELED } from '../common/db-errors.js';

/**
 * A read whose client has gone: nothing will read its answer, so its statements are cancelled. Only reads
 * (GET, HEAD): a write the client stopped waiting for may still be wanted (a CI job that posts and hangs up),
 * and its transaction decides for itself.
 */
interface ReadContext {
  /** Cancels each statement of the request still running. */
  running: Set<() => void>;
  /** The client went away: statements the request would still start are refused at once. */
  gone: boolean;
}

const reads = new AsyncLocalStorage<ReadContext>();

/**
 * Express middleware: runs a read's handlers in a context that its statements register with, and when the
 * connection closes before the answer was sent, cancels those still running (see {@link instrumentPool}).
 * Without it, a read whose client had given up ran on: a results page filtered by 2,000 statuses held its
 * connection, at full CPU, for three minutes after the client left.
 */
export function cancelReadsOnDisconnect(req: Request, res: Response, next: NextFunction): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    next();
    return;
  }
  const context: ReadContext = { running: new Set(), gone: false };
  res.once('close', () => {
    if (!res.writableFinished) {
      context.gone = true;
      for (const cancel of context.running) {
        cancel();
      }
    }
  });
  reads.run(context, next);
}

interface TrackedClient extends pg.PoolClient {
  [WRAPPED]?: true;
  /** A cancel request on its way: the client's next statement waits for it, so that it never hits that one. */
  [CANCELLING]?: Promise<void>;
}

const WRAPPED = Symbol('read-cancellation');
const CANCELLING = Symbol('cancelling');

/**
 * Wraps each client of the DataSource's pool (once, when first checked out) so that a statement started inside
 * a read's context can be cancelled: by PostgreSQL's own cancel request (what psql's Ctrl-C sends), on a
 * connection of its own, so that a cancel never waits for a free connection of the pool it is relieving.
 *
 * A cancel reaches the backend a moment after it is sent; had the statement finished meanwhile and the pool
 * handed the client to another request, that request's statement would be cancelled instead. So a cancel is
 * sent only while the statement is still running, and the client's next statement waits until PostgreSQL has
 * taken the cancel request (a backend that is idle by then ignores it).
 */
export function instrumentPool(dataSource: DataSource): void {
  const pool = (dataSource.driver as unknown as { master?: pg.Pool }).master;
  pool?.on('acquire', (client) => wrap(client));
}

function wrap(client: TrackedClient): void {
  if (client[WRAPPED]) {
    return;
  }
  client[WRAPPED] = true;
  const original = client.query.bind(client) as (...args: unknown[]) => unknown;
  const start = (args: unknown[]): unknown => {
    const context = reads.getStore();
    if (!context) {
      return original.apply(client, args);
    }
    if (context.gone) {
      return Promise.reject(clientGone());
    }
    let running = true;
    const cancel = () => {
      if (running && !client[CANCELLING]) {
        client[CANCELLING] = sendCancel(client).finally(() => {
          client[CANCELLING] = undefined;
        });
      }
    };
    context.running.add(cancel);
    const result = original.apply(client, args) as Promise<unknown>;
    const done = () => {
      running = false;
      context.running.delete(cancel);
    };
    void result.then(done, done);
    return result;
  };
  client.query = ((...args: unknown[]) => {
    // Only the promise form (text or config, no callback) is tracked: TypeORM's. Streams (COPY) and callbacks
    // pass through as they are.
    const promised =
      (typeof args[0] === 'string' ||
        (typeof args[0] === 'object' && args[0] !== null && !('submit' in args[0]))) &&
      typeof args[args.length - 1] !== 'function';
    if (!promised) {
      return original.apply(client, args);
    }
    const pending = client[CANCELLING];
    return pending ? pending.then(() => start(args)) : start(args);
  }) as typeof client.query;
}

/** PostgreSQL's CancelRequest for the client's backend, sent as node-postgres's Client#cancel sends it. */
function sendCancel(client: TrackedClient): Promise<void> {
  const { host, port } = client as unknown as { host: string; port: number };
  const { processID, secretKey } = client as unknown as { processID: number; secretKey: number };
  return new Promise((resolve) => {
    // node-postgres's protocol connection; its typings leave out the two calls a cancel request needs.
    const connection = new pg.Connection() as pg.Connection & {
      stream: { destroy(): void };
      connect(port: number | string, host?: string): void;
      cancel(processID: number, secretKey: number): void;
    };
    const finish = () => {
      clearTimeout(timer);
      connection.stream.destroy();
      resolve();
    };
    // The postmaster closes the connection once it has signalled the backend; a server that does not answer
    // must not hold the client's next statement for long.
    const timer = setTimeout(finish, 2_000);
    connection.once('connect', () => connection.cancel(processID, secretKey));
    connection.once('end', finish);
    connection.once('error', finish);
    if (host.startsWith('/')) {
      connection.connect(`${host}/.s.PGSQL.${port}`);
    } else {
      connection.connect(port, host);
    }
  });
}

function clientGone(): Error {
  return Object.assign(new Error('canceling statement: the client went away'), { code: QUERY_CANCELED });
}
