/**
 * Emitted when something changes how a user signs in. The mail module listens and sends the
 * security notice; the emitter never waits for it.
 */
export const SECURITY_NOTICE = 'account.security-notice';

export type SecurityNoticeKind = 'TWO_FACTOR_ENABLED' | 'TWO_FACTOR_DISABLED' | 'PASSWORD_CHANGED';

export interface SecurityNoticeEvent {
  kind: SecurityNoticeKind;
  userId: string;
  email: string;
  fullName: string;
  at: Date;
  /** The client address the change came from, when known. */
  ip?: string;
}

/** The notice of `kind` for `user`, happening now. */
export function securityNotice(
  kind: SecurityNoticeKind,
  user: { id: string; email: string; fullName: string },
  ip?: string,
): SecurityNoticeEvent {
  return { kind, userId: user.id, email: user.email, fullName: user.fullName, at: new Date(), ip };
}
