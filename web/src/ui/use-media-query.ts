import { useEffect, useState } from 'react';

/** The phone layout's query (styles.css uses the same width). */
export const PHONE = '(max-width: 640px)';

/**
 * Whether the media query matches now, kept up as it changes (a phone turned, a window resized). False where there
 * is no matchMedia (a test's DOM).
 */
export function useMediaQuery(query: string): boolean {
  const [matches, setMatches] = useState(() => window.matchMedia?.(query).matches ?? false);
  useEffect(() => {
    const list = window.matchMedia?.(query);
    if (!list) {
      return;
    }
    const changed = () => setMatches(list.matches);
    changed();
    list.addEventListener('change', changed);
    return () => list.removeEventListener('change', changed);
  }, [query]);
  return matches;
}
