import { AppError } from './app-error.js';

/**
 * How many values one list-valued query parameter (`status`, `change`, `sort`) takes, counting repeats: far
 * more than any list has distinct values, yet a request cannot hand the service thousands of them.
 */
export const MAX_LIST_VALUES = 20;

/**
 * A class-transformer `@Transform` for a list-valued query parameter given repeated (`status=A&status=B`),
 * comma-separated (`status=A,B`) or both: its values in the order first given, each once. A repeat used to be
 * kept, and each copy was another branch of the query: `status=FAILED,FAILED` listed every failure twice, and
 * 2,000 copies of one status held a connection for minutes. More than `max` values, repeats included, is a 400
 * naming the parameter (thrown here: the validators only ever see the values left once each).
 */
export function distinctList(name: string, { split = true, max = MAX_LIST_VALUES } = {}) {
  return ({ value }: { value: unknown }): unknown => {
    const given = (Array.isArray(value) ? value : [value]).flatMap((v) =>
      split && typeof v === 'string' ? v.split(',') : [v],
    );
    if (given.length > max) {
      throw AppError.validation(`${name} takes at most ${max} values (given ${given.length})`);
    }
    // An empty item of a comma list (`A,,B`, a trailing comma) is nothing; an empty `sort=` is left to its validator.
    return [...new Set(split ? given.filter((v) => v !== '') : given)];
  };
}
