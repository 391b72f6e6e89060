import { useCallback, useEffect, useRef } from 'react';

/** `fn`, called at most once per `ms`: a burst of calls runs it at once and once more at the end. */
export function useThrottled(fn: () => void, ms: number): () => void {
  const state = useRef<{ last: number; timer?: ReturnType<typeof setTimeout> }>({ last: 0 });
  useEffect(() => {
    const current = state.current;
    return () => clearTimeout(current.timer);
  }, []);
  return useCallback(() => {
    const s = state.current;
    const wait = s.last + ms - Date.now();
    if (wait <= 0) {
      s.last = Date.now();
      fn();
    } else if (!s.timer) {
      s.timer = setTimeout(() => {
        s.timer = undefined;
        s.last = Date.now();
        fn();
      }, wait);
    }
  }, [fn, ms]);
}
