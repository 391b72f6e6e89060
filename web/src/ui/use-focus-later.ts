import { useCallback, useEffect, useRef } from 'react';

/**
 * Focus given to an element that is not there yet: `focusLater(find)` looks for it after each render until `find`
 * answers it, enabled (the button a closed form gives the focus back to, once the form is gone and the list read
 * anew shows it).
 */
export function useFocusLater(): (find: () => HTMLElement | null) => void {
  const pending = useRef<(() => HTMLElement | null) | undefined>(undefined);
  useEffect(() => {
    const element = pending.current?.();
    if (element && !(element as HTMLButtonElement).disabled) {
      element.focus();
      pending.current = undefined;
    }
  });
  return useCallback((find) => {
    pending.current = find;
  }, []);
}
