import net from 'node:net';
import { generate } from 'selfsigned';
import { SMTPServer, SMTPServerOptions } from 'smtp-server';

/** A message as the relay received it, with its plain-text body decoded. */
export interface CapturedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  raw: string;
  headers: Record<string, string>;
  /** The user the client authenticated as, if it did. */
  user?: string;
  secure: boolean;
}

export interface RelayOptions {
  /** Implicit TLS from the first byte (port 465 style). */
  secure?: boolean;
  /** Offer STARTTLS with a self-signed certificate. */
  starttls?: boolean;
  /** Require this user and password; without it AUTH is not offered and must not be attempted. */
  auth?: { user: string; pass: string };
  /** Answer every message with this SMTP error (e.g. 451 try again later). */
  rejectWith?: { code: number; message: string };
}

let certificate: Promise<{ key: string; cert: string }> | undefined;
const selfSigned = () =>
  (certificate ??= generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048, days: 2 } as never).then(
    (pems) => ({ key: pems.private, cert: pems.cert }),
  ));

/**
 * A real SMTP server in the test process (the `smtp-server` package): plain, implicit TLS or STARTTLS,
 * with or without AUTH, optionally refusing everything. It records messages, AUTH attempts and connections.
 */
export class TestRelay {
  readonly messages: CapturedMail[] = [];
  readonly authAttempts: string[] = [];
  connections = 0;
  private server!: SMTPServer;
  port = 0;

  constructor(readonly options: RelayOptions = {}) {}

  async start(): Promise<this> {
    const tls = this.options.secure || this.options.starttls ? await selfSigned() : undefined;
    const config: SMTPServerOptions = {
      secure: Boolean(this.options.secure),
      ...(tls ?? {}),
      disabledCommands: [...(this.options.auth ? [] : ['AUTH']), ...(tls ? [] : ['STARTTLS'])],
      authOptional: !this.options.auth,
      logger: false,
      onConnect: (_session, callback) => {
        this.connections++;
        callback();
      },
      onAuth: (auth, _session, callback) => {
        this.authAttempts.push(auth.username ?? '');
        const ok = auth.username === this.options.auth?.user && auth.password === this.options.auth?.pass;
        callback(ok ? null : Object.assign(new Error('Invalid credentials'), { responseCode: 535 }), ok ? { user: auth.username } : undefined);
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (this.options.rejectWith) {
            callback(Object.assign(new Error(this.options.rejectWith.message), { responseCode: this.options.rejectWith.code }));
            return;
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          this.messages.push({
            ...parseMessage(raw),
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            user: session.user as string | undefined,
            secure: Boolean(session.secure),
          });
          callback();
        });
      },
    };
    this.server = new SMTPServer(config);
    this.server.on('error', () => undefined);
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.server.address() as net.AddressInfo).port;
    return this;
  }

  /** The messages to one address, oldest first. */
  to(address: string): CapturedMail[] {
    return this.messages.filter((m) => m.to.includes(address.toLowerCase()));
  }

  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(this.port),
      SVC_SMTP_TLS_REJECT_UNAUTHORIZED: 'false',
      MAIL_FROM: 'TMS <noreply@tms.example.com>',
      ...(this.options.auth ? { SMTP_USER: this.options.auth.user, SMTP_PASS: this.options.auth.pass } : {}),
      ...extra,
    };
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A "relay" that accepts TCP connections and never says a word. */
export async function silentRelay(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        sockets.forEach((s) => s.destroy());
        server.close(() => resolve());
      }),
  };
}

/** Headers and the decoded text body of a single-part plain-text message. */
export function parseMessage(raw: string): { subject: string; text: string; raw: string; headers: Record<string, string> } {
  const split = raw.search(/\r?\n\r?\n/);
  const head = raw.slice(0, split).replace(/\r?\n[ \t]+/g, ' ');
  const body = raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) {
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
  }
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  const text =
    encoding === 'quoted-printable'
      ? Buffer.from(
          body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
          'latin1',
        ).toString('utf8')
      : encoding === 'base64'
        ? Buffer.from(body, 'base64').toString('utf8')
        : body;
  return { subject: decodeWords(headers.subject ?? ''), text: text.replace(/\r\n/g, '\n'), raw, headers };
}

function decodeWords(value: string): string {
  return value.replace(/=\?utf-8\?([QB])\?([^?]*)\?=\s*/gi, (_, enc: string, data: string) =>
    enc.toUpperCase() === 'B'
      ? Buffer.from(data, 'base64').toString('utf8')
      : Buffer.from(data.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (__, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8'),
  );
}

/** The token of the first `?token=` link in a message. */
export function tokenIn(mail: { text: string }): string {
  const match = /[?&]token=([A-Za-z0-9_%-]+)/.exec(mail.text);
  if (!match) {
    throw new Error(`no token link in:\n${mail.text}`);
  }
  return decodeURIComponent(match[1]);
}
