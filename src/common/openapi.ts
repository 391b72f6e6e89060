import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * Each operation's id, as SDK methods are named after it (`client.login(…)`, not the framework's
 * `AuthController_login`): keyed by the framework's default, `Controller_method`. Unique; a test checks that every
 * operation has one.
 */
export const OPERATION_IDS: Record<string, string> = {
  HealthController_health: 'health',
  HealthController_ready: 'ready',
  AuditController_list: 'listAuditEvents',
  AuthController_login: 'login',
  AuthController_verifyTwoFactor: 'verifyTwoFactor',
  AuthController_refresh: 'refresh',
  AuthController_logout: 'logout',
  AuthController_me: 'getMe',
  AccountController_register: 'register',
  AccountController_verifyEmail: 'verifyEmail',
  AccountController_forgotPassword: 'forgotPassword',
  AccountController_resetPassword: 'resetPassword',
  ApiTokensController_create: 'createApiKey',
  ApiTokensController_list: 'listApiKeys',
  ApiTokensController_revoke: 'revokeApiKey',
  ProjectsController_create: 'createProject',
  ProjectsController_list: 'listProjects',
  ProjectsController_get: 'getProject',
  ProjectsController_update: 'updateProject',
  ProjectsController_delete: 'deleteProject',
  ProjectsController_members: 'listProjectMembers',
  ProjectsController_setMember: 'setProjectMember',
  ProjectsController_removeMember: 'removeProjectMember',
  InvitationsController_inviteToProject: 'inviteToProject',
  InvitationsController_inviteToWorkspace: 'inviteToWorkspace',
  InvitationsController_accept: 'acceptInvitation',
  RunsV1Controller_createRun: 'createRun',
  RunsV1Controller_listRuns: 'listRuns',
  RunsV1Controller_getRun: 'getRun',
  RunsV1Controller_deleteRun: 'deleteRun',
  RunsV1Controller_addResults: 'addResults',
  RunsV1Controller_listResults: 'listResults',
  RunsV1Controller_getResult: 'getResult',
  RunsV1Controller_finish: 'finishRun',
  RunsV1Controller_listTests: 'listTests',
  RunsV1Controller_getTest: 'getTest',
  RunsV1Controller_history: 'getTestHistory',
  InsightsController_failureGroups: 'listFailureGroups',
  InsightsController_suites: 'listRunSuites',
  InsightsController_compare: 'compareRuns',
  InsightsController_compareTests: 'listComparedTests',
  InsightsController_trend: 'getPassRateTrend',
  InsightsController_streams: 'listStreams',
  SettingsController_get: 'getProjectSettings',
  SettingsController_change: 'changeProjectSettings',
  StabilityController_quarantine: 'quarantineTest',
  StabilityController_release: 'releaseTest',
  StabilityController_listQuarantined: 'listQuarantinedTests',
  RunsV1Controller_pin: 'pinRun',
  RunsV1Controller_unpin: 'unpinRun',
  TriageController_list: 'listFailures',
  TriageController_get: 'getFailure',
  TriageController_change: 'triageFailure',
  TriageController_similar: 'listSimilarFailures',
  GateController_get: 'getRunGate',
  RetentionController_run: 'runRetention',
  RetentionController_preview: 'previewRetention',
  WebhooksController_create: 'createWebhook',
  WebhooksController_list: 'listWebhooks',
  WebhooksController_get: 'getWebhook',
  WebhooksController_update: 'updateWebhook',
  WebhooksController_delete: 'deleteWebhook',
  WebhooksController_test: 'testWebhook',
  WebhooksController_deliveries: 'listWebhookDeliveries',
  WebhooksController_redeliver: 'redeliverWebhookDelivery',
  NotificationsMeController_get: 'getMyNotifications',
  NotificationsMeController_put: 'setMyNotifications',
  IngestV2Controller_createRun: 'createRunV2',
  IngestV2Controller_addResults: 'addResultsV2',
  IngestV2Controller_finish: 'finishRunV2',
  IngestV2Controller_status: 'getRunV2',
  ImportController_import: 'importReport',
  AdminUsersController_list: 'listUsers',
  AdminUsersController_update: 'updateUser',
  AdminGroupsController_create: 'createGroup',
  AdminGroupsController_list: 'listGroups',
  AdminGroupsController_get: 'getGroup',
  AdminGroupsController_rename: 'renameGroup',
  AdminGroupsController_delete: 'deleteGroup',
  AdminGroupsController_members: 'listGroupMembers',
  AdminGroupsController_replaceBindings: 'setGroupBindings',
  AdminGroupsController_addMember: 'addGroupMember',
  AdminGroupsController_removeMember: 'removeGroupMember',
  BillingController_get: 'getSubscription',
  BillingController_update: 'updateSubscription',
  BillingController_event: 'receiveBillingEvent',
  TwoFactorController_status: 'getTwoFactorStatus',
  TwoFactorController_enroll: 'enrolTwoFactor',
  TwoFactorController_activate: 'activateTwoFactor',
  TwoFactorController_disable: 'disableTwoFactor',
};

/** Marks a public route in the document (set by @Public()): no credentials, `security: []`. */
export const PUBLIC_EXTENSION = 'x-public';

const ERROR_BODY = { $ref: '#/components/schemas/ErrorBody' };
const REASONS: Record<string, string> = {
  '400': 'Invalid input: the message names every offending field',
  '401': 'Missing, invalid or expired credentials',
  '404': 'No such resource, or one the caller cannot see',
};

type Operation = {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: { in: string }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
  [PUBLIC_EXTENSION]?: boolean;
};

/**
 * The document as SDK generators and linters need it, from what the controllers declare: meaningful operation ids;
 * public operations with `security: []` and the others with the bearer scheme; on every operation the error
 * responses it can give (401 unless public, 400 when it takes input, 404 when its path names a resource), each
 * with the error body; raw uploads as binary bodies; a license.
 */
export function finishDocument(document: OpenAPIObject): OpenAPIObject {
  document.info.license = { name: 'Proprietary' };
  for (const item of Object.values(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = (item as Record<string, Operation | undefined>)[method];
      if (!operation) {
        continue;
      }
      operation.operationId = OPERATION_IDS[operation.operationId ?? ''] ?? operation.operationId;
      const isPublic = operation[PUBLIC_EXTENSION] === true;
      delete operation[PUBLIC_EXTENSION];
      if (isPublic) {
        // Public to the bearer guard; the refresh cookie's routes keep their cookie scheme.
        operation.security = operation.security?.length ? operation.security : [];
      } else if (!operation.security?.length) {
        operation.security = [{ bearer: [] }];
      }
      const wanted = [
        ...(isPublic && !operation.security?.length ? [] : ['401']),
        ...(operation.requestBody || operation.parameters?.some((p) => p.in !== 'header') ? ['400'] : []),
        ...(operation.parameters?.some((p) => p.in === 'path') ? ['404'] : []),
      ];
      for (const status of wanted) {
        operation.responses[status] ??= { description: REASONS[status] };
      }
      // A raw upload's body is the file itself; only a form has `file` parts (Nest gives every type the form's).
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        if (type !== 'multipart/form-data' && JSON.stringify(media.schema ?? {}).includes('"file"')) {
          media.schema = { type: 'string', format: 'binary' };
        }
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        if (/^[45]\d\d$/.test(status) && !response.content) {
          response.content = { 'application/json': { schema: ERROR_BODY } };
        }
      }
    }
  }
  return document;
}
