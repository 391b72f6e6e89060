import net from 'node:net';

/**
 * A TCP relay in front of a real service (PostgreSQL, Redis), for outage tests without mocks: `cut()` drops every
 * connection and refuses new ones, as a server that went away; `restore()` takes connections again, same port.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  /** Starts relaying; resolves to the port. */
  async start(): Promise<number> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.sockets.add(from);
        from.on('error', () => to.destroy());
        from.on('close', () => {
          this.sockets.delete(from);
          to.destroy();
        });
        from.pipe(to);
      }
    });
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(this.port, '127.0.0.1', () => done());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this.port;
  }

  /** The address `url` (postgres://…, redis://…) has when it goes through this proxy. */
  through(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.sockets.forEach((socket) => socket.destroy());
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  }

  restore(): Promise<number> {
    return this.start();
  }
}

/** host and port of a service URL. */
export function endpointOf(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || defaultPort) };
}
