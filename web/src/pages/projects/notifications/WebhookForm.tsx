import { type FormEvent, useRef, useState } from 'react';
import { type Webhook, WEBHOOK_EVENTS, type WebhookEvent, type WebhookInput } from '../../../api/client';
import { ErrorMessage, Field } from '../../../ui/components';
import { useEscape } from '../../../ui/use-escape';

const EVENT_LABELS: Record<(typeof WEBHOOK_EVENTS)[number], string> = {
  'run.finished': 'a run finished',
  'run.failed': 'a run failed its gate',
  'failure.new': 'new failures',
  'test.flaky': 'a test turned flaky',
  'test.quarantined': 'a test was quarantined',
};

/** A webhook's URL, events, format (and, when editing, whether it is on): to add one or to change one. */
export function WebhookForm({
  webhook,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  /** The webhook changed; none to add one. */
  webhook?: Webhook;
  pending: boolean;
  error: unknown;
  onSubmit: (input: WebhookInput) => void;
  onCancel?: () => void;
}) {
  const [url, setUrl] = useState(webhook?.url ?? '');
  const [events, setEvents] = useState<WebhookEvent[]>(webhook?.events ?? ['run.finished', 'run.failed']);
  const [format, setFormat] = useState<WebhookInput['format']>(webhook?.format ?? 'standard');
  const [active, setActive] = useState(webhook?.active ?? true);
  const id = webhook ? `webhook-${webhook.id}` : 'webhook-new';
  const form = useRef<HTMLFormElement>(null);
  useEscape(form, onCancel);
  const toggle = (event: WebhookEvent, on: boolean) =>
    setEvents((list) => (on ? [...list, event] : list.filter((e) => e !== event)));
  return (
    <form
      className="webhook-form"
      aria-label={webhook ? `Edit webhook ${webhook.url}` : 'Add a webhook'}
      noValidate
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        onSubmit({ url: url.trim(), events, format, ...(webhook ? { active } : {}) });
      }}
      ref={form}
    >
      <Field
        label="Payload URL"
        // Opened by a button: its first field is where the user goes next.
        autoFocus
        name="url"
        type="url"
        inputMode="url"
        autoComplete="off"
        placeholder="https://ci.example.com/hooks/tms"
        value={url}
        onChange={(e) => setUrl(e.target.value)}
        hint="http or https, reachable from the service; private and loopback addresses are refused"
      />
      <fieldset className="events">
        <legend>Events</legend>
        {WEBHOOK_EVENTS.map((event) => (
          <label className="check" key={event}>
            <input
              type="checkbox"
              checked={events.includes(event)}
              onChange={(e) => toggle(event, e.target.checked)}
            />{' '}
            <code>{event}</code> <span className="hint">{EVENT_LABELS[event]}</span>
          </label>
        ))}
      </fieldset>
      <div className="row">
        <div className="field">
          <label htmlFor={`${id}-format`}>Format</label>
          <select
            id={`${id}-format`}
            value={format}
            onChange={(e) => setFormat(e.target.value as WebhookInput['format'])}
          >
            <option value="standard">Standard Webhooks (signed JSON)</option>
            <option value="slack">Slack incoming webhook</option>
          </select>
        </div>
        {webhook ? (
          <label className="check">
            <input type="checkbox" checked={active} onChange={(e) => setActive(e.target.checked)} /> Active
          </label>
        ) : null}
      </div>
      {error ? <ErrorMessage error={error} /> : null}
      <div className="row">
        <button type="submit" disabled={pending || !url.trim() || events.length === 0}>
          {webhook ? 'Save webhook' : 'Add webhook'}
        </button>
        {onCancel ? (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
