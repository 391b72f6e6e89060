import { type RefObject, useEffect } from 'react';

/** Escape pressed anywhere in the element (a form opened inline) does what its Cancel does. */
export function useEscape(ref: RefObject<HTMLElement | null>, onEscape: (() => void) | undefined): void {
  useEffect(() => {
    const element = ref.current;
    if (!element || !onEscape) {
      return;
    }
    const escape = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        onEscape();
      }
    };
    element.addEventListener('keydown', escape);
    return () => element.removeEventListener('keydown', escape);
  }, [ref, onEscape]);
}
