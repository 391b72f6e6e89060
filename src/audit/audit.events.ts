/** What the audit trail records; other features emit these as domain events and never import the audit module. */
export const AUDIT_EVENT = 'audit.record';

export const AUDIT_TYPES = [
  'LOGIN_SUCCESS',
  'LOGIN_FAILURE',
  'LOGOUT',
  'REFRESH_TOKEN_REUSE',
  'RATE_LIMIT_HIT',
  'PASSWORD_RESET',
  'EMAIL_VERIFIED',
  'TWO_FACTOR_ENABLED',
  'TWO_FACTOR_DISABLED',
  'TWO_FACTOR_FAILURE',
  'RECOVERY_CODE_USED',
  'API_TOKEN_CREATED',
  'API_TOKEN_REVOKED',
  'USER_UPDATED',
  'ROLE_CHANGED',
  'GROUP_CHANGED',
  'DIRECTORY_SYNC',
  'DIRECTORY_UNAVAILABLE',
  'PROJECT_CREATED',
  'PROJECT_UPDATED',
  'PROJECT_DELETED',
  'INVITATION_CREATED',
  'INVITATION_ACCEPTED',
  'SUBSCRIPTION_CHANGED',
  'PROJECT_SETTINGS_CHANGED',
  'TEST_QUARANTINED',
  'TEST_RELEASED',
  'FAILURE_TRIAGED',
  'WEBHOOK_CREATED',
  'WEBHOOK_UPDATED',
  'WEBHOOK_DELETED',
  'WEBHOOK_DEACTIVATED',
  'RETENTION_CLEANUP',
] as const;

export type AuditType = (typeof AUDIT_TYPES)[number];

export interface AuditRecord {
  type: AuditType;
  actorId?: string | null;
  actorEmail?: string | null;
  ip?: string | null;
  target?: string | null;
  details?: Record<string, unknown>;
  /** Events with the same key are one row whose `details.count` goes up (e.g. repeated rate-limit hits). */
  aggregateKey?: string;
}
