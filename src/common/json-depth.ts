/**
 * How deep the API's JSON bodies may nest objects and arrays (the top-level value counts as one level). Far
 * beyond any body the API takes (a result batch nests four levels), and far below the depth at which a
 * recursive reader (class-transformer, class-validator) overflows the stack: ~5,000 levels gave a 500.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether `value` nests objects or arrays more than `limit` levels deep. Never recurses more than `limit`
 * levels itself, however deep the value, and stops at the first branch that is too deep.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  if (limit === 0) {
    return true;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (nestsDeeperThan(value[i], limit - 1)) {
        return true;
      }
    }
    return false;
  }
  // JSON.parse's objects have no inherited enumerable properties: for…in sees their own keys, without an array.
  for (const key in value) {
    if (nestsDeeperThan((value as Record<string, unknown>)[key], limit - 1)) {
      return true;
    }
  }
  return false;
}
