/**
 * Every operation the app calls, as method and path template: a test checks each against the served OpenAPI
 * document (/v3/api-docs), so the app never calls what the API does not have.
 */
export const OPERATIONS = {
  login: ['POST', '/api/auth/login'],
  verifyTwoFactor: ['POST', '/api/auth/2fa/verify'],
  me: ['GET', '/api/auth/me'],
  register: ['POST', '/api/auth/register'],
  verifyEmail: ['POST', '/api/auth/verify-email'],
  forgotPassword: ['POST', '/api/auth/forgot-password'],
  resetPassword: ['POST', '/api/auth/reset-password'],
  acceptInvitation: ['POST', '/api/invitations/accept'],
  listApiKeys: ['GET', '/api/users/me/api-keys'],
  createApiKey: ['POST', '/api/users/me/api-keys'],
  revokeApiKey: ['DELETE', '/api/users/me/api-keys/{id}'],
  twoFactorStatus: ['GET', '/api/auth/2fa'],
  enrolTwoFactor: ['POST', '/api/auth/2fa/enroll'],
  activateTwoFactor: ['POST', '/api/auth/2fa/activate'],
  disableTwoFactor: ['POST', '/api/auth/2fa/disable'],
  listUsers: ['GET', '/api/admin/users'],
  updateUser: ['PATCH', '/api/admin/users/{id}'],
  listGroups: ['GET', '/api/admin/groups'],
  getGroup: ['GET', '/api/admin/groups/{id}'],
  createGroup: ['POST', '/api/admin/groups'],
  renameGroup: ['PATCH', '/api/admin/groups/{id}'],
  deleteGroup: ['DELETE', '/api/admin/groups/{id}'],
  setBindings: ['PUT', '/api/admin/groups/{id}/bindings'],
  listGroupMembers: ['GET', '/api/admin/groups/{id}/members'],
  addGroupMember: ['PUT', '/api/admin/groups/{id}/members/{userId}'],
  removeGroupMember: ['DELETE', '/api/admin/groups/{id}/members/{userId}'],
  audit: ['GET', '/api/admin/audit'],
  subscription: ['GET', '/api/admin/subscription'],
  listProjects: ['GET', '/api/projects'],
  createProject: ['POST', '/api/projects'],
  listRuns: ['GET', '/api/projects/{projectId}/runs'],
  getRun: ['GET', '/api/runs/{runId}'],
  listResults: ['GET', '/api/runs/{runId}/results'],
  importReport: ['POST', '/api/import/{format}'],
  testHistory: ['GET', '/api/projects/{projectId}/tests/{testId}/history'],
} as const satisfies Record<string, readonly [string, string]>;

export type Operation = keyof typeof OPERATIONS;
