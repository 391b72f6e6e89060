import { type Operation, OPERATIONS } from './operations.js';
import type { AccessToken, Session } from './session.js';

/** A page of the API (`{content, page, size, totalElements, totalPages}`). */
export interface Page<T> {
  content: T[];
  page: number;
  size: number;
  totalElements: number;
  totalPages: number;
}

export interface Me {
  id: number;
  email: string;
  fullName: string;
  admin: boolean;
  authSource: 'LOCAL' | 'LDAP';
  twoFactorEnabled: boolean;
  emailVerified: boolean;
  createdAt: string;
}

export interface TwoFactorChallenge {
  twoFactorRequired: true;
  challengeToken: string;
  expiresIn: number;
}

export interface ApiKey {
  id: number;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
}

/** The key as created: its token, shown this once; not yet used. */
export interface CreatedApiKey extends Omit<ApiKey, 'lastUsedAt'> {
  token: string;
}

export interface TwoFactorStatus {
  enabled: boolean;
  pending: boolean;
  recoveryCodesRemaining: number;
}

export interface Enrolment {
  secret: string;
  otpauthUrl: string;
  qrCodeDataUrl: string;
  recoveryCodes: string[];
}

export interface AdminUser {
  id: number;
  email: string;
  fullName: string;
  admin: boolean;
  enabled: boolean;
  authSource: 'LOCAL' | 'LDAP';
  createdAt: string;
}

/** A group as listed. */
export interface GroupSummary {
  id: number;
  name: string;
  memberCount: number;
}

/** A group with its project bindings (`memberCount` when read, not when just created). */
export interface Group {
  id: number;
  name: string;
  bindings: { projectId: number; role: ProjectRole }[];
  memberCount?: number;
}

export interface GroupMember {
  userId: number;
  email: string;
  fullName: string;
  source: 'MANUAL' | 'DIRECTORY';
}

export type ProjectRole = 'VIEWER' | 'REPORTER' | 'MAINTAINER' | 'OWNER';

/** The project roles, least first: each may do what the ones before it may. */
export const ROLES: readonly ProjectRole[] = ['VIEWER', 'REPORTER', 'MAINTAINER', 'OWNER'];

/** Whether `role` may do what `needed` may (the API's own rule; a platform admin's role is OWNER). */
export const roleAtLeast = (role: ProjectRole, needed: ProjectRole): boolean =>
  ROLES.indexOf(role) >= ROLES.indexOf(needed);

/** A project's latest finished run of its default stream. */
export interface LatestRun {
  id: number;
  name: string;
  status: Run['status'];
  stream: string;
  startedAt: string;
  finishedAt: string | null;
  counts: RunCounts;
  /** passed ÷ (passed + failed + broken), 0..1; null when none of them. */
  passRate: number | null;
}

export interface Project {
  id: number;
  key: string;
  name: string;
  description?: string | null;
  role: ProjectRole;
  latestRun?: LatestRun | null;
}

export interface Member {
  userId: number;
  email: string;
  fullName: string;
  role: ProjectRole;
  via: 'DIRECT' | 'GROUP';
}

/** A test's health (API.md, "Test health"): quarantined, else flaky, else failing by its last status, else healthy. */
export const TEST_STATES = ['HEALTHY', 'FAILING', 'FLAKY', 'QUARANTINED'] as const;
export type TestState = (typeof TEST_STATES)[number];

/** Why and since when a test is quarantined; `auto` when the flaky tests policy did it (no user then). */
export interface Quarantine {
  since: string;
  reason: string;
  auto: boolean;
  byUserId: number | null;
  until: string | null;
}

export interface TestCase {
  id: number;
  suite: string;
  name: string;
  lastStatus: ResultStatus | null;
  flaky: boolean;
  /** Flips ÷ (runs − 1) over the flaky policy's window, 0..1; null until the test has run twice. */
  flakeRate: number | null;
  /** The runs of the window it ran in. */
  runs: number;
  firstSeenAt: string | null;
  lastFailedAt: string | null;
  quarantine: Quarantine | null;
  state: TestState;
}

/** The sorts of the tests list (`field,asc|desc`). */
export const TEST_SORTS = ['name', 'flakeRate', 'lastFailedAt', 'firstSeenAt'] as const;

/** What a quarantine is set with: a reason, and optionally when it ends by itself. */
export interface QuarantineRequest {
  reason: string;
  until?: string;
}

export interface FailureGroup {
  key: string;
  count: number;
  failed: number;
  broken: number;
  tests: number;
  example: string | null;
  /** The project-wide failure signature of the group (API.md, "Failure triage across runs"). */
  signatureId?: number | null;
  /** Whether its signature was first seen in this run. */
  isNew?: boolean;
  triage?: Triage;
  issue?: IssueLink | null;
  /** Not in the contract: used when the service adds them, else read from the signature. */
  firstSeen?: SeenAt;
  runs?: number;
  suggested?: Suggestion | null;
}

/** How a failure was judged: TO_INVESTIGATE until someone (or a suggestion) says otherwise. */
export const TRIAGES = [
  'TO_INVESTIGATE',
  'PRODUCT_BUG',
  'AUTOMATION_BUG',
  'SYSTEM_ISSUE',
  'NO_DEFECT',
] as const;
export type Triage = (typeof TRIAGES)[number];

/** A ticket a failure is known by: `url` http(s), its `key` (PROJ-123) and `title` when given. */
export interface IssueLink {
  url: string;
  key?: string | null;
  title?: string | null;
}

/** Where a failure signature was seen: the run and when. */
export interface SeenAt {
  runId: number;
  at: string;
}

/** A triage and issue inherited from a similar signature, until someone confirms or changes them. */
export interface Suggestion {
  fromId: number;
  /** 0..1. */
  similarity: number;
}

/** A failure signature: one cause of failures, project-wide, with its history and triage. */
export interface Signature {
  id: number;
  projectId: number;
  key: string;
  sampleMessage: string | null;
  firstSeen: SeenAt;
  lastSeen: SeenAt;
  occurrences: number;
  tests: number;
  runs: number;
  triage: Triage;
  issue: IssueLink | null;
  note: string | null;
  assignee: { id: number; email: string; fullName: string } | null;
  suggested: Suggestion | null;
}

/** A signature as its own page reads it: with the runs it was seen in last and the tests it hits most. */
export interface SignatureDetail extends Signature {
  recentRuns: { runId: number; name: string; at: string; count: number }[];
  topTests: { testId: number; suite: string; name: string; count: number }[];
}

/** PATCH /api/failures/{id}: only what changes. */
export interface TriageChange {
  triage?: Triage;
  issue?: IssueLink | null;
  note?: string | null;
  assigneeId?: number | null;
}

export interface Suite {
  suite: string;
  total: number;
  failed: number;
}

export const CHANGES = [
  'NEW_FAILURE',
  'FIXED',
  'STILL_FAILING',
  'FLAKY',
  'ADDED',
  'REMOVED',
  'UNCHANGED',
] as const;
export type Change = (typeof CHANGES)[number];

export interface Comparison {
  head: Run;
  base: Run | null;
  sameRevision: boolean;
  summary: {
    newFailures: number;
    fixed: number;
    stillFailing: number;
    flaky: number;
    added: number;
    removed: number;
    unchanged: number;
  };
}

export interface TestChange {
  testId: number;
  suite: string;
  name: string;
  change: Change;
  baseStatus: ResultStatus | null;
  headStatus: ResultStatus | null;
  message: string | null;
}

export interface TrendPoint {
  runId: number;
  name: string;
  status: Run['status'];
  stream: string;
  startedAt: string;
  durationMs: number | null;
  counts: RunCounts;
  passRate: number | null;
}

/** A list's query in the API's terms: `sort` as `field,asc|desc`; empty values are left out. */
export type ListQuery = Record<string, string | number | undefined>;

/** Counts of a run's tests by their outcome (the last attempt of each test), and of its attempts. */
export interface RunCounts {
  total: number;
  passed: number;
  failed: number;
  broken: number;
  skipped: number;
  /** Outcomes PASSED after an earlier FAILED or BROKEN attempt (counted in `passed` too). */
  passedOnRetry: number;
  /** Every result stored. */
  attempts: number;
}

export interface Run {
  id: number;
  projectId: number;
  /** The id the client gave the run, if any (V2 runs always have one). */
  uuid?: string | null;
  name: string;
  status: 'IN_PROGRESS' | 'FINISHED';
  startedAt: string;
  finishedAt: string | null;
  attributes: Record<string, string>;
  /** The runs it is compared with: its name without the build number, and its branch and environment. */
  stream: string;
  counts: RunCounts;
  /**
   * Tests failing now and not in the run before in its stream (compare's NEW_FAILURE), stored when the run finished;
   * null while it runs or when it had no run before.
   */
  newFailures: number | null;
  /** Kept by the retention cleanup whatever its age. */
  pinned: boolean;
  /** The quality gate's verdict (GET /api/runs/{id}/gate for its conditions). */
  gate: { status: GateStatus };
}

/**
 * The quality gate: PENDING while the run is in progress (and until its finish is evaluated), OFF when the project
 * disabled it, else whether every condition held.
 */
export type GateStatus = 'PASSED' | 'FAILED' | 'PENDING' | 'OFF';

export const GATE_CONDITIONS = ['maxFailed', 'minPassRate', 'minTotal', 'noNewFailures'] as const;

/** One condition of a gate: what the settings ask for, what the run had (a pass rate in percent). */
export interface GateCondition {
  name: (typeof GATE_CONDITIONS)[number];
  expected: number;
  /** null: a pass rate with nothing passed, failed or broken to take it of. */
  actual: number | null;
  passed: boolean;
}

/** A run's gate (GET /api/runs/{id}/gate). */
export interface RunGate {
  status: GateStatus;
  evaluatedAt: string | null;
  conditions: GateCondition[];
  /** What the gate left out: results of quarantined tests, failures with a known issue. */
  ignored: { quarantined: number; knownIssues: number };
}

/** A project's stream with its number of runs and the run started last (GET /api/projects/{id}/streams). */
export interface Stream {
  stream: string;
  runs: number;
  latestRun: LatestRun;
}

/** A project's settings (GET/PATCH /api/projects/{id}/settings). */
export interface ProjectSettings {
  flaky: {
    window: number;
    minRuns: number;
    flipRate: number;
    autoQuarantine: boolean;
    releaseAfterPasses: number;
  };
  gate: {
    enabled: boolean;
    maxFailed: number | null;
    minPassRate: number | null;
    minTotal: number | null;
    noNewFailures: boolean;
    ignoreQuarantined: boolean;
    ignoreKnownIssues: boolean;
  };
  triage: { similarity: number };
  retention: { keepDays: number | null; keepRuns: number | null };
  streams: { attributes: string[]; default: string | null };
}

/** A change of settings: any groups, each any of its fields. */
export type SettingsPatch = { [G in keyof ProjectSettings]?: Partial<ProjectSettings[G]> };

/** What a retention policy would remove now (GET /api/projects/{id}/retention/preview). */
export interface RetentionPreview {
  runs: number;
  results: number;
}

export type ResultStatus = 'PASSED' | 'FAILED' | 'BROKEN' | 'SKIPPED';

/** Whether a status is a failure: FAILED or BROKEN. */
export const isFailure = (status: ResultStatus): boolean => status === 'FAILED' || status === 'BROKEN';

export interface Result {
  id: number;
  runId: number;
  testId: number;
  name: string;
  suite: string;
  status: ResultStatus;
  durationMs: number | null;
  message: string | null;
  trace: string | null;
  retry: number;
  /** Whether this is its test's outcome in the run (its last attempt); false only when every attempt is listed. */
  outcome: boolean;
  /** On an outcome, the test's number of attempts in the run; null on an earlier attempt. */
  attempts: number | null;
  /** An outcome that passed after an earlier attempt of its test failed or broke. */
  passedOnRetry: boolean;
  /** A FAILED or BROKEN result's signature and its triage. */
  failure?: { signatureId: number; isNew: boolean; triage: Triage; issue: IssueLink | null } | null;
}

/** One attempt of a test in a run: a result without its texts. */
export interface Attempt {
  id: number;
  status: ResultStatus;
  retry: number;
  durationMs: number | null;
  startedAt: string | null;
}

/** One result as its page reads it: with its attributes and every attempt of its test in the run. */
export interface ResultDetail extends Omit<Result, 'attempts' | 'passedOnRetry'> {
  startedAt: string | null;
  attributes: Record<string, string>;
  attempts: Attempt[];
}

/** One attempt of a test in a run, as a test's history lists them: with its message and trace. */
export interface HistoryAttempt extends Attempt {
  message: string | null;
  trace: string | null;
}

/** A test's outcome in one run, with every attempt there, first to last. */
export interface HistoryItem extends Omit<Result, 'outcome' | 'attempts' | 'passedOnRetry'> {
  runName: string;
  startedAt: string | null;
  attempts: HistoryAttempt[];
}

/** The last failed or broken attempt of a run's outcome in a test's history, if any (a pass after it: passed on retry). */
export function failedAttempt(i: Pick<HistoryItem, 'attempts'>): HistoryAttempt | undefined {
  // A loop, not findLast: SDK users compile this file with an ES2022 library (test/e2e/sdk.e2e.spec.ts).
  for (let k = i.attempts.length - 1; k >= 0; k--) {
    if (isFailure(i.attempts[k].status)) {
      return i.attempts[k];
    }
  }
  return undefined;
}

/** Passed in the run, after a failed or broken attempt there: what makes a test flaky by retries alone. */
export const passedOnRetry = (i: Pick<HistoryItem, 'status' | 'attempts'>): boolean =>
  i.status === 'PASSED' && failedAttempt(i) !== undefined;

/** How a run's outcome reads in a test's history: "passed on retry" where it passed after a failed attempt. */
export const historyStatusText = (i: Pick<HistoryItem, 'status' | 'attempts'>): string =>
  passedOnRetry(i) ? 'passed on retry' : i.status.toLowerCase();

export interface AuditEvent {
  id: number;
  at: string;
  type: string;
  actorId: number | null;
  actorEmail: string | null;
  ip: string | null;
  /** What the event concerns, as the service writes it: `project:1`, `group:2`, `user:3`, an endpoint, ... */
  target: string | null;
  /** The target as people know it (a project's name, a user's email, `project #1 (deleted)`); null for others. */
  targetLabel: string | null;
  details: Record<string, unknown>;
}

export interface Subscription {
  plan: string;
  seats: number;
  seatsUsed: number;
  periodEnd: string;
  status: 'TRIAL' | 'ACTIVE' | 'PAST_DUE' | 'EXPIRED';
}

/** What a webhook may be sent (API.md, "Notifications: webhooks and mail"). */
export const WEBHOOK_EVENTS = [
  'run.finished',
  'run.failed',
  'failure.new',
  'test.flaky',
  'test.quarantined',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number] | 'ping';

export interface Webhook {
  id: number;
  projectId: number;
  url: string;
  events: WebhookEvent[];
  format: 'standard' | 'slack';
  active: boolean;
  /** Why the service turned it off (a 410, 24 hours of failures); null otherwise. */
  deactivatedReason: string | null;
  lastDelivery: { status: Delivery['status']; statusCode: number | null; at: string } | null;
  createdAt: string;
}

/** A webhook as created: with its signing secret, shown this once. */
export interface CreatedWebhook extends Webhook {
  secret: string;
}

export interface WebhookInput {
  url: string;
  events: WebhookEvent[];
  format: 'standard' | 'slack';
  active?: boolean;
}

export interface Delivery {
  id: number;
  event: WebhookEvent;
  status: 'PENDING' | 'DELIVERED' | 'FAILED';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

/** The mail about a project its reader asked for. */
export interface NotifyMe {
  runFailed: boolean;
  newFailures: boolean;
}

/** The path of `operation` with its `{param}`s filled and `query` appended (empty values left out). */
export function pathOf(
  operation: Operation,
  params: Record<string, string | number> = {},
  query: Record<string, string | number | undefined> = {},
): string {
  const path = OPERATIONS[operation][1].replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(String(params[name])),
  );
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') {
      search.set(key, String(value));
    }
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/** The typed API of the app, over one Session. */
export function apiOf(session: Session) {
  const call = <T>(
    operation: Operation,
    options: {
      params?: Record<string, string | number>;
      query?: Record<string, string | number | undefined>;
      body?: unknown;
    } = {},
  ) =>
    session.request<T>(
      OPERATIONS[operation][0],
      pathOf(operation, options.params, options.query),
      options.body,
    );
  const anonymous = <T>(operation: Operation, body?: unknown) =>
    session.anonymous<T>(OPERATIONS[operation][0], OPERATIONS[operation][1], body);
  return {
    login: (username: string, password: string) =>
      anonymous<AccessToken | TwoFactorChallenge>('login', { username, password }),
    verifyTwoFactor: (challengeToken: string, code: string) =>
      anonymous<AccessToken>('verifyTwoFactor', { challengeToken, code }),
    register: (fullName: string, email: string) =>
      anonymous<{ message: string }>('register', { fullName, email }),
    verifyEmail: (token: string, password: string) => anonymous<void>('verifyEmail', { token, password }),
    forgotPassword: (email: string) => anonymous<{ message: string }>('forgotPassword', { email }),
    resetPassword: (token: string, password: string) => anonymous<void>('resetPassword', { token, password }),
    acceptInvitation: (body: { token: string; fullName?: string; password?: string }) =>
      anonymous<{ projectId: number | null; role: ProjectRole | null; accountCreated: boolean }>(
        'acceptInvitation',
        body,
      ),
    me: () => call<Me>('me'),
    listApiKeys: (page = 0) => call<Page<ApiKey>>('listApiKeys', { query: { page, size: 50 } }),
    createApiKey: (name: string, expiresAt?: string) =>
      call<CreatedApiKey>('createApiKey', { body: { name, ...(expiresAt ? { expiresAt } : {}) } }),
    revokeApiKey: (id: number) => call<void>('revokeApiKey', { params: { id } }),
    twoFactorStatus: () => call<TwoFactorStatus>('twoFactorStatus'),
    enrolTwoFactor: () => call<Enrolment>('enrolTwoFactor'),
    activateTwoFactor: (code: string) => call<void>('activateTwoFactor', { body: { code } }),
    disableTwoFactor: (code: string) => call<void>('disableTwoFactor', { body: { code } }),
    listUsers: (q: string, page: number) =>
      call<Page<AdminUser>>('listUsers', { query: { q, page, size: 20 } }),
    updateUser: (id: number, changes: { admin?: boolean; enabled?: boolean }) =>
      call<AdminUser>('updateUser', { params: { id }, body: changes }),
    listGroups: (page = 0) => call<Page<GroupSummary>>('listGroups', { query: { page, size: 50 } }),
    getGroup: (id: number) => call<Group>('getGroup', { params: { id } }),
    createGroup: (name: string) => call<Group>('createGroup', { body: { name } }),
    renameGroup: (id: number, name: string) => call<Group>('renameGroup', { params: { id }, body: { name } }),
    deleteGroup: (id: number) => call<void>('deleteGroup', { params: { id } }),
    setBindings: (id: number, bindings: Group['bindings']) =>
      call<Group>('setBindings', { params: { id }, body: bindings }),
    listGroupMembers: (id: number) =>
      call<Page<GroupMember>>('listGroupMembers', { params: { id }, query: { size: 200 } }),
    addGroupMember: (id: number, userId: number) => call<void>('addGroupMember', { params: { id, userId } }),
    removeGroupMember: (id: number, userId: number) =>
      call<void>('removeGroupMember', { params: { id, userId } }),
    audit: (query: { type?: string; actorId?: string; from?: string; to?: string; page: number }) =>
      call<Page<AuditEvent>>('audit', { query: { ...query, size: 50, sort: 'at,desc' } }),
    subscription: () => call<Subscription>('subscription'),
    listProjects: (page = 0, size = 200) => call<Page<Project>>('listProjects', { query: { page, size } }),
    createProject: (key: string, name: string) => call<Project>('createProject', { body: { key, name } }),
    getProject: (projectId: number) => call<Project>('getProject', { params: { projectId } }),
    getSettings: (projectId: number) => call<ProjectSettings>('getSettings', { params: { projectId } }),
    changeSettings: (projectId: number, patch: SettingsPatch) =>
      call<ProjectSettings>('changeSettings', { params: { projectId }, body: patch }),
    listStreams: (projectId: number) =>
      call<Page<Stream>>('listStreams', { params: { projectId }, query: { size: 200 } }).then(
        (page) => page.content,
      ),
    listRuns: (projectId: number, query: ListQuery) =>
      call<Page<Run>>('listRuns', { params: { projectId }, query: { size: 20, ...query } }),
    getRun: (runId: number) => call<Run>('getRun', { params: { runId } }),
    getRunGate: (runId: number) => call<RunGate>('getRunGate', { params: { runId } }),
    pinRun: (runId: number) => call<Run>('pinRun', { params: { runId } }),
    unpinRun: (runId: number) => call<void>('unpinRun', { params: { runId } }),
    retentionPreview: (projectId: number, keep: ProjectSettings['retention']) =>
      call<RetentionPreview>('retentionPreview', {
        params: { projectId },
        query: { keepDays: keep.keepDays ?? undefined, keepRuns: keep.keepRuns ?? undefined },
      }),
    runRetention: (projectId: number) =>
      call<{ runsDeleted: number; resultsDeleted: number }>('runRetention', { params: { projectId } }),
    testHistory: (projectId: number, testId: number, page = 0, size = 100) =>
      call<Page<HistoryItem>>('testHistory', { params: { projectId, testId }, query: { page, size } }),
    getTest: (projectId: number, testId: number) =>
      call<TestCase>('getTest', { params: { projectId, testId } }),
    /** `state` a comma list of TestStates; `sort` one of TEST_SORTS with a direction. */
    listTests: (projectId: number, query: ListQuery) =>
      call<Page<TestCase>>('listTests', { params: { projectId }, query: { size: 20, ...query } }),
    quarantineTest: (projectId: number, testId: number, body: QuarantineRequest) =>
      call<TestCase>('quarantineTest', { params: { projectId, testId }, body }),
    releaseTest: (projectId: number, testId: number) =>
      call<void>('releaseTest', { params: { projectId, testId } }),
    listResults: (runId: number, query: ListQuery) =>
      call<Page<Result>>('listResults', { params: { runId }, query: { size: 50, ...query } }),
    getResult: (runId: number, resultId: number) =>
      call<ResultDetail>('getResult', { params: { runId, resultId } }),
    trend: (projectId: number, runs = 30, stream?: string) =>
      call<{ points: TrendPoint[] }>('trend', { params: { projectId }, query: { runs, stream } }),
    failureGroups: (runId: number, page = 0) =>
      call<Page<FailureGroup>>('failureGroups', { params: { runId }, query: { page, size: 20 } }),
    suites: (runId: number) => call<Page<Suite>>('suites', { params: { runId }, query: { size: 500 } }),
    compare: (runId: number, base?: number) =>
      call<Comparison>('compare', { params: { runId }, query: { base } }),
    compareTests: (runId: number, query: ListQuery) =>
      call<Page<TestChange>>('compareTests', { params: { runId }, query: { size: 50, ...query } }),
    listMembers: (projectId: number, page = 0, size = 50) =>
      call<Page<Member>>('listMembers', {
        params: { projectId },
        query: { page, size, sort: 'email,asc' },
      }),
    setMember: (projectId: number, userId: number, role: ProjectRole) =>
      call<Member>('setMember', { params: { projectId, userId }, body: { role } }),
    removeMember: (projectId: number, userId: number) =>
      call<void>('removeMember', { params: { projectId, userId } }),
    invite: (projectId: number, email: string, role: ProjectRole) =>
      call<unknown>('invite', { params: { projectId }, body: { email, role } }),
    listWebhooks: (projectId: number) =>
      call<Page<Webhook>>('listWebhooks', { params: { projectId }, query: { size: 100 } }),
    createWebhook: (projectId: number, body: WebhookInput) =>
      call<CreatedWebhook>('createWebhook', { params: { projectId }, body }),
    updateWebhook: (webhookId: number, body: Partial<WebhookInput>) =>
      call<Webhook>('updateWebhook', { params: { webhookId }, body }),
    deleteWebhook: (webhookId: number) => call<void>('deleteWebhook', { params: { webhookId } }),
    testWebhook: (webhookId: number) => call<void>('testWebhook', { params: { webhookId } }),
    listDeliveries: (webhookId: number, page = 0) =>
      call<Page<Delivery>>('listDeliveries', { params: { webhookId }, query: { page, size: 20 } }),
    redeliver: (webhookId: number, deliveryId: number) =>
      call<void>('redeliver', { params: { webhookId, deliveryId } }),
    getNotifyMe: (projectId: number) => call<NotifyMe>('getNotifyMe', { params: { projectId } }),
    putNotifyMe: (projectId: number, body: Partial<NotifyMe>) =>
      call<NotifyMe>('putNotifyMe', { params: { projectId }, body }),
    /** Every member a select can offer (the API's largest page); a user in through a group and directly once. */
    allMembers: (projectId: number) =>
      call<Page<Member>>('listMembers', {
        params: { projectId },
        query: { size: 500, sort: 'email,asc' },
      }).then((page) =>
        page.content.filter((m, i, all) => all.findIndex((o) => o.userId === m.userId) === i),
      ),
    listFailures: (projectId: number, query: ListQuery) =>
      call<Page<Signature>>('listFailures', { params: { projectId }, query: { size: 20, ...query } }),
    getFailure: (failureId: number) => call<SignatureDetail>('getFailure', { params: { failureId } }),
    similarFailures: (failureId: number) =>
      call<{ signature: Signature; similarity: number }[]>('similarFailures', { params: { failureId } }),
    triageFailure: (failureId: number, change: TriageChange) =>
      call<Signature>('triageFailure', { params: { failureId }, body: change }),
  };
}

export type Api = ReturnType<typeof apiOf>;
