import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the receiver got: its path, headers and raw body. */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: Record<string, unknown>;
}

/**
 * What the receiver answers on a path, given how many requests that path has had before this one (0 for the first):
 * a status, a status with headers (a redirect's Location), or 'hang' to keep the request open without an answer
 * (until the receiver closes).
 */
export type Script = (nth: number) => number | { status: number; headers: Record<string, string> } | 'hang';

/** A local HTTP server standing in for a webhook's receiver: it records every request and answers as scripted. */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly scripts = new Map<string, Script>();
  private readonly hanging = new Set<http.ServerResponse>();
  private server!: http.Server;
  port = 0;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const body = Buffer.concat(chunks).toString('utf8');
        const nth = this.on(path).length;
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(body) as Record<string, unknown>;
        } catch {
          // not JSON: kept as text
        }
        this.received.push({ path, headers: req.headers, body, json });
        const answer = (this.scripts.get(path) ?? (() => 200))(nth);
        if (answer === 'hang') {
          this.hanging.add(res);
          return;
        }
        const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
        res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(String(status));
      });
    });
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** `http://127.0.0.1:<port><path>` (or another host name for the same port). */
  url(path: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  script(path: string, script: Script): void {
    this.scripts.set(path, script);
  }

  on(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    for (const res of this.hanging) {
      res.destroy();
    }
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server.close(() => done()));
  }
}
