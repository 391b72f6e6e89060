/** PostgreSQL's unique_violation, whichever driver wrapper carries it. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; driverError?: { code?: string } } | null;
  return e?.code === '23505' || e?.driverError?.code === '23505';
}

/** PostgreSQL's foreign_key_violation. */
export function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: string; driverError?: { code?: string } } | null;
  return e?.code === '23503' || e?.driverError?.code === '23503';
}
