/**
 * A run's stream (API.md, "Streams"): runs of the same job on the same branch and environment, the runs a run is
 * compared with. By default, its name without a trailing build number or id, followed by the values of the
 * attributes named in the project's `streams.attributes` that the run has, joined with " · ".
 *
 * The same rule is written in SQL by the migration that gave existing runs their stream (1795720200000-Streams):
 * change both, or neither.
 */

/**
 * A trailing build number or id, after a separator (or as the whole name): `#1221`, ` 57`, `-57`, a UUID, a hex
 * hash of 7 to 64 digits with at least one decimal digit (`4f2a9c1`), or an ISO timestamp (`2026-11-26T10:00:00Z`,
 * as an import names its run). Case-insensitive. POSIX-compatible, so that PostgreSQL's regexp_replace reads it too.
 */
export const TRAILING_ID =
  '(^|[[:space:]#:_./-]+)(#?[0-9]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?=[0-9a-f]{7,64}$)[0-9a-f]*[0-9][0-9a-f]*|[0-9]{4}-[0-9]{2}-[0-9]{2}([t ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?(z|[+-][0-9]{2}:?[0-9]{2})?)?)$';

/** The stream of runs whose name is only a build number or id, without any of the attributes. */
export const NUMBERED = '#';

/** Stream names joined: base name and attribute values. */
export const STREAM_SEPARATOR = ' · ';

const trailingId = new RegExp(TRAILING_ID.replaceAll('[[:space:]', '[\\s'), 'i');

/** The name without its trailing build numbers or ids (at most three, as in `nightly #1221 4f2a9c1`). */
export function streamBase(name: string): string {
  let base = name.trim();
  for (let i = 0; i < 3; i++) {
    const stripped = base.replace(trailingId, '').trim();
    if (stripped === base) {
      break;
    }
    base = stripped;
  }
  return base;
}

/** The longest stream, in characters (runs.stream). */
const MAX_STREAM_CHARS = 200;

/** A run's default stream: see above. */
export function defaultStream(
  name: string,
  attributes: Record<string, string>,
  streamAttributes: string[],
): string {
  const parts = [streamBase(name) || NUMBERED];
  for (const key of streamAttributes) {
    const value = Object.hasOwn(attributes, key) ? attributes[key]?.trim() : undefined;
    if (value) {
      parts.push(value);
    }
  }
  const stream = parts.join(STREAM_SEPARATOR);
  // 200 characters (the column's), not UTF-16 units: a cut there could halve an emoji, leaving a lone surrogate.
  return stream.length > MAX_STREAM_CHARS ? [...stream].slice(0, MAX_STREAM_CHARS).join('') : stream;
}
