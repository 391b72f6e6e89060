/** Emitted when an invitation is stored; the mail module sends it (and marks it mailed). */
export const INVITATION_CREATED = 'invitation.created';

export interface InvitationCreatedEvent {
  invitationId: string;
  kind: 'PROJECT' | 'WORKSPACE';
  email: string;
  /** The raw token for the link; only this event carries it, the database keeps its hash. */
  token: string;
  projectId: string | null;
  role: string | null;
  invitedBy: string;
}
