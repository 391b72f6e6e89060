/** Project roles, lowest first: each may do everything the ones before it may. */
export const PROJECT_ROLES = ['VIEWER', 'REPORTER', 'MAINTAINER', 'OWNER'] as const;

export type ProjectRole = (typeof PROJECT_ROLES)[number];

export function roleRank(role: ProjectRole): number {
  return PROJECT_ROLES.indexOf(role) + 1;
}

export function atLeast(role: ProjectRole | null, required: ProjectRole): boolean {
  return role !== null && roleRank(role) >= roleRank(required);
}

export function highest(roles: (ProjectRole | null | undefined)[]): ProjectRole | null {
  let best: ProjectRole | null = null;
  for (const role of roles) {
    if (role && (!best || roleRank(role) > roleRank(best))) {
      best = role;
    }
  }
  return best;
}

/** The same order as a SQL array literal: `array_position(ROLE_ORDER_SQL, role)` ranks a role column. */
export const ROLE_ORDER_SQL = `ARRAY[${PROJECT_ROLES.map((r) => `'${r}'`).join(',')}]::varchar[]`;
