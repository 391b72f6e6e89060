import type { ReactNode } from 'react';

/**
 * One group of a project's settings: a card with its heading, what the group governs, and its form or its values.
 * Each group of the API's settings has a section of its own, so the issue that gives a group its editor changes
 * that section alone.
 */
export function SettingsSection({
  id,
  title,
  about,
  note,
  children,
}: {
  id: string;
  title: string;
  /** What the group governs, in a sentence. */
  about: ReactNode;
  /** Who may change it, when the reader may not. */
  note?: ReactNode;
  children: ReactNode;
}) {
  return (
    <section className="card settings-section" aria-labelledby={`${id}-title`} id={id}>
      <h2 id={`${id}-title`}>{title}</h2>
      <p className="hint settings-about">{about}</p>
      {note ? <p className="settings-note">{note}</p> : null}
      {children}
    </section>
  );
}

/** A group's current values, read-only: each setting's name and its value in words. */
export function Values({ label, items }: { label: string; items: [string, ReactNode][] }) {
  return (
    <dl className="settings-values" aria-label={label}>
      {items.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
