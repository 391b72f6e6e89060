/**
 * Everything the command writes goes through here, so that no secret (the token, a password in the URL) is ever
 * printed: not in a summary, not in a server's message, not in an error from the HTTP stack.
 */

/** @type {Set<string>} */
const secrets = new Set();

/** @param {string | undefined} secret */
export function addSecret(secret) {
  if (secret) {
    secrets.add(secret);
    // As it may appear inside a URL or a header that was escaped on the way.
    secrets.add(encodeURIComponent(secret));
  }
}

/**
 * @param {unknown} text
 * @returns {string} the text with every known secret replaced by ***
 */
export function scrub(text) {
  let out = String(text);
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    out = out.split(secret).join('***');
  }
  return out;
}

/**
 * A copy of `data` with every string scrubbed: before it is rendered, since escaping it for Markdown or JSON could
 * hide a secret from the scrubbing of the printed text.
 * @template T
 * @param {T} data
 * @returns {T}
 */
export function scrubDeep(data) {
  if (typeof data === 'string') {
    return /** @type {T} */ (scrub(data));
  }
  if (Array.isArray(data)) {
    return /** @type {T} */ (data.map(scrubDeep));
  }
  if (data && typeof data === 'object') {
    return /** @type {T} */ (Object.fromEntries(Object.entries(data).map(([k, v]) => [k, scrubDeep(v)])));
  }
  return data;
}

/** @param {string} text written to standard output as it is (after scrubbing) */
export function print(text) {
  process.stdout.write(scrub(text.endsWith('\n') ? text : `${text}\n`));
}

/** Whether a progress bar is drawn on the current line of standard error (a note then starts a new line). */
let barDrawn = false;

/** @param {boolean} drawn */
export function setBarDrawn(drawn) {
  barDrawn = drawn;
}

/** @param {string} text a line for the person watching: progress, warnings, retries (standard error) */
export function note(text) {
  if (barDrawn) {
    barDrawn = false;
    process.stderr.write('\n');
  }
  process.stderr.write(scrub(text.endsWith('\n') ? text : `${text}\n`));
}

/** The byte count as a person reads it: `12.3 MiB`. @param {number} bytes */
export function formatBytes(bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}
