import type { AppConfig } from './app-config.js';

export interface PartLine {
  text: string;
  warn?: string;
}

/** One boot-log line per swappable part: real or embedded, and a warning when embedded parts meet real ones. */
export function describeParts(config: AppConfig): PartLine[] {
  const parts: [string, boolean, string, string][] = [
    ['database', Boolean(config.db.url), 'PostgreSQL at SVC_DB_URL', `embedded PostgreSQL in ${config.db.embeddedDir}`],
    ['key-value store', Boolean(config.kv.url), 'Redis at SVC_KVSTORE_URL', 'in-process store (single node)'],
  ];
  // The queue's embedded counterpart is a table in the database: with a real database, replicas share it.
  const queue: [string, boolean, string, string] = [
    'ingest queue',
    Boolean(config.broker.amqpUrl) || Boolean(config.db.url),
    config.broker.amqpUrl ? 'RabbitMQ at SVC_BROKER_AMQP_URL' : 'PostgreSQL table in SVC_DB_URL (SKIP LOCKED)',
    'PostgreSQL table in the embedded database (SKIP LOCKED)',
  ];
  parts.push(queue);
  const stomp = config.relay.stomp;
  parts.push(['live-update relay', Boolean(stomp), `STOMP at ${stomp?.host}:${stomp?.port}`, 'in-process (single node)']);
  const lines: PartLine[] = parts.map(([name, real, realText, embeddedText]) => ({
    text: `${name}: ${real ? realText : embeddedText}`,
  }));
  const anyReal = parts.some(([, real]) => real);
  const embedded = parts.filter(([, real]) => !real).map(([name]) => name);
  if (anyReal && embedded.length) {
    lines.push({
      text: 'mixed deployment',
      warn: `Embedded ${embedded.join(', ')} serve(s) one node only: with a real ${parts
        .filter(([, r]) => r)
        .map(([n]) => n)
        .join(', ')} several replicas would not share ${embedded.length > 1 ? 'them' : 'it'}`,
    });
  }
  lines.push({
    text: `directory login: ${config.ldap ? `${config.ldap.url} (users: ${config.ldap.userSearchFilter} under ${config.ldap.userSearchBase})` : 'off (SVC_AUTH_LDAP_ENABLED unset)'}`,
  });
  // Mail holds no shared state: the outbox is a development convenience, not a reason to warn about replicas.
  const smtp = config.mail.smtp;
  lines.push({
    text: `mail relay: ${
      smtp ? `SMTP at ${smtp.host}:${smtp.port}${smtp.user ? ' with AUTH' : ' without AUTH'}` : `log and ${config.mail.outboxDir} (SMTP_HOST unset)`
    }`,
  });
  lines.push({
    text: `two-factor secrets: AES-256-GCM under ${
      config.encryption.derived ? 'a key derived from SVC_JWT_SECRET (SVC_ENCRYPTION_KEY unset)' : 'SVC_ENCRYPTION_KEY'
    }`,
  });
  return lines;
}
