import type { AuditRecord } from '../audit/audit.events.js';

/** One audit row per client, endpoint and hour; repeated hits raise its `details.count`. */
export function rateLimitAudit(
  ip: string,
  endpoint: string,
  details: Record<string, unknown>,
  actor?: { id?: string; email?: string },
): AuditRecord {
  const hour = new Date().toISOString().slice(0, 13);
  return {
    type: 'RATE_LIMIT_HIT',
    ip,
    target: endpoint,
    actorId: actor?.id ?? null,
    actorEmail: actor?.email ?? null,
    details,
    aggregateKey: `RATE_LIMIT_HIT|${ip}|${endpoint}|${actor?.email ?? ''}|${hour}`,
  };
}
