/** The largest body a delivery posts (API.md): 256 KiB. */
export const MAX_BODY_BYTES = 256 * 1024;
/** New signatures listed in one failure.new delivery; `count` says how many there were. */
export const MAX_SIGNATURES = 100;
const ROOM_FOR_ENVELOPE = 1024;

/**
 * An event's data cut to fit a delivery: a failure.new lists its first 100 signatures and their count; anything
 * still over 256 KiB has its long texts cut, then its lists halved, until it fits (`truncated: true` says so).
 */
export function fitPayload(type: string, data: Record<string, unknown>): Record<string, unknown> {
  let fitted = { ...data };
  if (type === 'failure.new' && Array.isArray(fitted.signatures)) {
    const all = fitted.signatures as unknown[];
    fitted = {
      ...fitted,
      count: typeof fitted.count === 'number' ? fitted.count : all.length,
      signatures: all.slice(0, MAX_SIGNATURES),
    };
  }
  const fits = (value: unknown) =>
    Buffer.byteLength(JSON.stringify(value)) <= MAX_BODY_BYTES - ROOM_FOR_ENVELOPE;
  if (fits(fitted)) {
    return fitted;
  }
  for (const limit of [4096, 1024, 256]) {
    fitted = { ...(cutTexts(fitted, limit) as Record<string, unknown>), truncated: true };
    if (fits(fitted)) {
      return fitted;
    }
  }
  while (!fits(fitted)) {
    const halved = halveLists(fitted) as Record<string, unknown>;
    if (JSON.stringify(halved) === JSON.stringify(fitted)) {
      return { truncated: true };
    }
    fitted = halved;
  }
  return fitted;
}

function cutTexts(value: unknown, limit: number): unknown {
  if (typeof value === 'string') {
    return value.length > limit ? `${value.slice(0, limit)}…` : value;
  }
  if (Array.isArray(value)) {
    return value.map((v) => cutTexts(v, limit));
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutTexts(v, limit)]));
  }
  return value;
}

function halveLists(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.slice(0, Math.floor(value.length / 2)).map(halveLists);
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, halveLists(v)]));
  }
  return value;
}

/** A new failure's signature in a line: its test's name, else its message or key, else its id. */
export function signatureLabel(s: unknown): string {
  if (typeof s === 'string') {
    return s.slice(0, 200);
  }
  const o = (s ?? {}) as Record<string, unknown>;
  const name = [o.testName, o.name, o.title, o.message, o.sampleMessage, o.key].find(
    (v): v is string => typeof v === 'string',
  );
  const id = typeof o.id === 'number' || typeof o.id === 'string' ? o.id : '?';
  return name?.slice(0, 200) ?? `signature ${id}`;
}
