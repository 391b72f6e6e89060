import { oneLine } from '../common/text.js';

/**
 * One plain-text template per kind of message: what happened, the action link (built from SVC_BASE_URL)
 * and why the reader got it. Values come from the database or validated input; none may contain a line
 * break in a header (subjects are built here from fixed text and single-line names).
 */
export interface MailContext {
  productName: string;
  baseUrl: string;
}

export interface MailContent {
  subject: string;
  text: string;
}

export interface MailKinds {
  verification: { fullName: string; token: string; validHours: number };
  'account-exists': { fullName: string };
  'password-reset': { fullName: string; token: string; validMinutes: number };
  'project-invitation': { projectName: string; projectKey: string; role: string; invitedBy: string; token: string; validDays: number };
  'workspace-invitation': { invitedBy: string; token: string; validDays: number };
  'security-notice': { fullName: string; change: 'TWO_FACTOR_ENABLED' | 'TWO_FACTOR_DISABLED' | 'PASSWORD_CHANGED'; at: Date; ip?: string };
  'renewal-reminder': { plan: string; periodEnd: Date; daysLeft: number };
  'subscription-expired': { plan: string; periodEnd: Date };
  'payment-failed': { plan: string; reason?: string };
  'payment-succeeded': { plan: string; periodEnd: Date; amount?: string; invoiceId?: string };
  'seat-limit-reached': { seats: number; seatsUsed: number; invitedEmail: string };
  'run-failed': { fullName: string; projectId: string; projectName: string; runId: string; runName: string; summary: string; reasons: string[] };
  'new-failures': { fullName: string; projectId: string; projectName: string; runId: string; runName: string; count: number; names: string[] };
  'webhook-deactivated': { projectId: string; projectName: string; url: string; reason: string };
}

export type MailKind = keyof MailKinds;

const CHANGES = {
  TWO_FACTOR_ENABLED: 'two-factor authentication was turned on',
  TWO_FACTOR_DISABLED: 'two-factor authentication was turned off',
  PASSWORD_CHANGED: 'your password was changed',
} as const;

const day = (d: Date): string => d.toISOString().slice(0, 10);
const link = (ctx: MailContext, path: string, token?: string): string =>
  `${ctx.baseUrl}${path}${token ? `?token=${encodeURIComponent(token)}` : ''}`;
const hello = (name?: string): string => (name ? `Hello ${name},` : 'Hello,');
/** The line every notification mail ends with: why the reader got it and where to turn it off. */
const unsubscribe = (ctx: MailContext, projectId: string, projectName: string): string[] => [
  `You receive this because you asked to be notified about project "${projectName}".`,
  `To stop these mails, turn off "Notify me" at ${link(ctx, `/projects/${projectId}/settings`)}#notifications`,
];
const billingFooter = (ctx: MailContext): string =>
  `You receive this because you are a platform administrator of ${ctx.productName} at ${ctx.baseUrl}.`;

const TEMPLATES: { [K in MailKind]: (ctx: MailContext, v: MailKinds[K]) => MailContent } = {
  verification: (ctx, v) => ({
    subject: `${ctx.productName}: confirm your email address`,
    text: [
      hello(v.fullName),
      '',
      `Someone, hopefully you, registered an account with this address on ${ctx.productName}.`,
      'To confirm the address and choose your password, open this link:',
      '',
      link(ctx, '/verify-email', v.token),
      '',
      `The link works once and expires in ${v.validHours} hours.`,
      '',
      `You received this email because this address was entered at ${ctx.baseUrl}/register.`,
      'If that was not you, ignore this message: no account is activated without the link.',
    ].join('\n'),
  }),
  'account-exists': (ctx, v) => ({
    subject: `${ctx.productName}: you already have an account`,
    text: [
      hello(v.fullName),
      '',
      `Someone asked to register this address on ${ctx.productName}, but it already belongs to your account.`,
      `Sign in at ${link(ctx, '/login')}, or reset your password at ${link(ctx, '/forgot-password')}.`,
      '',
      'You received this email because this address was entered on the registration page.',
      'If that was not you, nothing has changed and you can ignore this message.',
    ].join('\n'),
  }),
  'password-reset': (ctx, v) => ({
    subject: `${ctx.productName}: reset your password`,
    text: [
      hello(v.fullName),
      '',
      `To choose a new password for your ${ctx.productName} account, open this link:`,
      '',
      link(ctx, '/reset-password', v.token),
      '',
      `The link works once and expires in ${v.validMinutes} minutes. Resetting signs you out everywhere.`,
      '',
      'You received this email because a password reset was requested for this address.',
      'If that was not you, ignore this message: your password stays as it is.',
    ].join('\n'),
  }),
  'project-invitation': (ctx, v) => ({
    subject: `${ctx.productName}: ${v.invitedBy} invited you to the project ${v.projectName}`,
    text: [
      hello(),
      '',
      `${v.invitedBy} invited you to the project "${v.projectName}" (${v.projectKey}) on ${ctx.productName} as ${v.role}.`,
      'To accept, open this link:',
      '',
      link(ctx, '/invitations/accept', v.token),
      '',
      `The invitation works once and expires in ${v.validDays} days.`,
      '',
      `You received this email because ${v.invitedBy} entered this address at ${ctx.baseUrl}.`,
      'If you do not want to join, ignore this message.',
    ].join('\n'),
  }),
  'workspace-invitation': (ctx, v) => ({
    subject: `${ctx.productName}: ${v.invitedBy} invited you to join`,
    text: [
      hello(),
      '',
      `${v.invitedBy} invited you to join ${ctx.productName} at ${ctx.baseUrl}.`,
      'To accept and create your account, open this link:',
      '',
      link(ctx, '/invitations/accept', v.token),
      '',
      `The invitation works once and expires in ${v.validDays} days.`,
      '',
      `You received this email because ${v.invitedBy} entered this address.`,
      'If you do not want to join, ignore this message.',
    ].join('\n'),
  }),
  'security-notice': (ctx, v) => ({
    subject: `${ctx.productName}: ${CHANGES[v.change]}`,
    text: [
      hello(v.fullName),
      '',
      `On ${v.at.toISOString()} ${CHANGES[v.change]} on your ${ctx.productName} account${v.ip ? ` (from ${v.ip})` : ''}.`,
      '',
      'If this was you, there is nothing to do.',
      `If it was not, reset your password at ${link(ctx, '/forgot-password')} and tell your administrator.`,
      '',
      'You received this email because it is a security notice about your account; these cannot be turned off.',
    ].join('\n'),
  }),
  'renewal-reminder': (ctx, v) => ({
    subject: `${ctx.productName}: your subscription renews in ${v.daysLeft} days`,
    text: [
      hello(),
      '',
      `The ${v.plan} subscription of ${ctx.productName} ends its period on ${day(v.periodEnd)}, in ${v.daysLeft} days.`,
      `Check the plan, the seats and the payment details at ${link(ctx, '/admin/subscription')}.`,
      '',
      billingFooter(ctx),
    ].join('\n'),
  }),
  'subscription-expired': (ctx, v) => ({
    subject: `${ctx.productName}: your subscription has expired`,
    text: [
      hello(),
      '',
      `The ${v.plan} subscription of ${ctx.productName} expired at the end of its period on ${day(v.periodEnd)}.`,
      `Renew it at ${link(ctx, '/admin/subscription')}.`,
      '',
      billingFooter(ctx),
    ].join('\n'),
  }),
  'payment-failed': (ctx, v) => ({
    subject: `${ctx.productName}: a payment failed`,
    text: [
      hello(),
      '',
      `A payment for the ${v.plan} subscription of ${ctx.productName} failed${v.reason ? `: ${v.reason}` : ''}.`,
      `The subscription is past due. Update the payment details at ${link(ctx, '/admin/subscription')}.`,
      '',
      billingFooter(ctx),
    ].join('\n'),
  }),
  'payment-succeeded': (ctx, v) => ({
    subject: `${ctx.productName}: payment received`,
    text: [
      hello(),
      '',
      `Thank you: the payment for the ${v.plan} subscription of ${ctx.productName} was received.`,
      ...(v.amount ? [`Amount: ${v.amount}`] : []),
      ...(v.invoiceId ? [`Invoice: ${v.invoiceId}`] : []),
      `The subscription is active until ${day(v.periodEnd)}.`,
      `Receipts and details: ${link(ctx, '/admin/subscription')}`,
      '',
      billingFooter(ctx),
    ].join('\n'),
  }),
  'seat-limit-reached': (ctx, v) => ({
    subject: `${ctx.productName}: the seat limit is reached`,
    text: [
      hello(),
      '',
      `An invitation for ${v.invitedEmail} would take ${ctx.productName} past its ${v.seats} seats (${v.seatsUsed} in use).`,
      `Add seats at ${link(ctx, '/admin/subscription')}, or disable accounts that are no longer needed.`,
      '',
      billingFooter(ctx),
    ].join('\n'),
  }),
  'run-failed': (ctx, v) => ({
    subject: `${ctx.productName}: run "${v.runName}" of ${v.projectName} failed its quality gate`,
    text: [
      hello(v.fullName),
      '',
      `The run "${v.runName}" of project "${v.projectName}" failed its quality gate.`,
      v.summary,
      ...(v.reasons.length ? ['', 'What failed:', ...v.reasons.map((r) => `- ${oneLine(r)}`)] : []),
      '',
      `Open the run: ${link(ctx, `/runs/${v.runId}`)}`,
      '',
      ...unsubscribe(ctx, v.projectId, v.projectName),
    ].join('\n'),
  }),
  'new-failures': (ctx, v) => ({
    subject: `${ctx.productName}: ${v.count} new ${v.count === 1 ? 'failure' : 'failures'} in run "${v.runName}" of ${v.projectName}`,
    text: [
      hello(v.fullName),
      '',
      `The run "${v.runName}" of project "${v.projectName}" brought ${v.count} new ${v.count === 1 ? 'failure' : 'failures'}:`,
      ...v.names.map((n) => `- ${oneLine(n)}`),
      ...(v.count > v.names.length ? [`and ${v.count - v.names.length} more.`] : []),
      '',
      `Open the run: ${link(ctx, `/runs/${v.runId}`)}`,
      '',
      ...unsubscribe(ctx, v.projectId, v.projectName),
    ].join('\n'),
  }),
  'webhook-deactivated': (ctx, v) => ({
    subject: `${ctx.productName}: a webhook of ${v.projectName} was turned off`,
    text: [
      hello(),
      '',
      `The webhook to ${v.url} of project "${v.projectName}" was turned off: ${v.reason}.`,
      'Its events are no longer sent. Check the receiver, then turn the webhook on again (and redeliver what it missed) at',
      `${link(ctx, `/projects/${v.projectId}/settings`)}#notifications`,
      '',
      `You receive this because you are an owner of project "${v.projectName}".`,
    ].join('\n'),
  }),
};

export function renderMail<K extends MailKind>(kind: K, ctx: MailContext, values: MailKinds[K]): MailContent {
  // Every value a user chose (a project's or a person's name) stays within its quotes on its line: a name with
  // line breaks, stored before they were refused at the door, cannot write paragraphs of its own into an
  // official mail. Line breaks are refused at the door; this is the last line of defence.
  const safe = Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, typeof value === 'string' ? oneLine(value) : value]),
  ) as MailKinds[K];
  const content = TEMPLATES[kind](ctx, safe);
  return { ...content, subject: oneLine(content.subject).slice(0, 300) };
}
