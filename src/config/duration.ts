const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** Parses `90`, `90s`, `15m`, `12h` or `30d` into whole seconds; undefined when the text is not one of them. */
export function parseDurationSeconds(text: string): number | undefined {
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!match) {
    return undefined;
  }
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2] || 's'];
  return seconds > 0 && Number.isSafeInteger(seconds) ? seconds : undefined;
}
