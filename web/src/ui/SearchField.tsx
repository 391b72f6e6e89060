import { useEffect, useRef, useState } from 'react';

/** A labelled search box whose text is applied (`onSearch`) after a pause in typing, not at every keystroke. */
export function SearchField({
  id,
  label,
  value,
  placeholder,
  onSearch,
}: {
  id: string;
  label: string;
  value: string;
  placeholder?: string;
  onSearch: (value: string) => void;
}) {
  const [text, setText] = useSearchText(value, onSearch);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="search"
        value={text}
        placeholder={placeholder}
        onChange={(e) => setText(e.target.value)}
      />
    </div>
  );
}

/**
 * A search box's text, applied through `apply` 300 ms after the last keystroke; follows `value` when it changes
 * from elsewhere (back and forward in history).
 */
export function useSearchText(
  value: string,
  apply: (value: string) => void,
): [string, (text: string) => void] {
  const [text, setText] = useState(value);
  const [pending, setPending] = useState(false);
  const [shown, setShown] = useState(value);
  if (value !== shown && !pending) {
    setShown(value);
    setText(value);
  }
  const applyRef = useRef(apply);
  useEffect(() => {
    applyRef.current = apply;
  });
  useEffect(() => {
    if (!pending) {
      return;
    }
    const timer = setTimeout(() => {
      setPending(false);
      applyRef.current(text.trim());
    }, 300);
    return () => clearTimeout(timer);
  }, [text, pending]);
  return [
    text,
    (next: string) => {
      setText(next);
      setPending(true);
    },
  ];
}
