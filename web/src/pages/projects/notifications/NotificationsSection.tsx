import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import {
  type CreatedWebhook,
  type ProjectRole,
  roleAtLeast,
  type Webhook,
  type WebhookInput,
} from '../../../api/client';
import { useApi } from '../../../session-context';
import { CopyButton } from '../../../ui/CopyButton';
import { Loaded, noItems } from '../../../ui/components';
import { type Outcome, outcomeOf, OutcomeLine, said } from '../../../ui/outcome';
import { RelativeTime } from '../../../ui/relative-time';
import { useFocusLater } from '../../../ui/use-focus-later';
import { useUrlState } from '../../../ui/url-state';
import { Deliveries, DeliveryStatus } from './Deliveries';
import { NotifyMe } from './NotifyMe';
import { WebhookForm } from './WebhookForm';

export const webhooksKey = (projectId: number) => ['webhooks', projectId] as const;

type Action = 'create' | 'update' | 'remove' | 'test';

/**
 * A project's notifications: the reader's own mail (any member), and for MAINTAINERs the project's webhooks, with
 * their events, format, state and latest delivery; add (the signing secret shown once, with Copy), test, edit,
 * delete, and the deliveries of one (in the URL: `?webhook=ID`) with Redeliver.
 */
export function NotificationsSection({ projectId, role }: { projectId: number; role: ProjectRole }) {
  const maintainer = roleAtLeast(role, 'MAINTAINER');
  return (
    <section className="card settings-section" aria-labelledby="notifications-title" id="notifications">
      <h2 id="notifications-title">Notifications</h2>
      <p className="hint settings-about">
        Who hears of a finished or failed run, new failures, a flaky or quarantined test: mail to members who
        ask for it, and webhooks to other systems.
      </p>
      <NotifyMe projectId={projectId} />
      {maintainer ? (
        <Webhooks projectId={projectId} />
      ) : (
        <p className="settings-note">Webhooks are managed by the project&apos;s maintainers and owners.</p>
      )}
    </section>
  );
}

function Webhooks({ projectId }: { projectId: number }) {
  const api = useApi();
  const queries = useQueryClient();
  const [state, set] = useUrlState(['webhook', 'dpage'] as const);
  const [adding, setAdding] = useState(false);
  // The form closed by Escape or Cancel gives the focus back to the button that opened it, there again once it is gone.
  const addButton = useRef<HTMLButtonElement>(null);
  const focusLater = useFocusLater();
  const [editing, setEditing] = useState<number | undefined>();
  const [created, setCreated] = useState<CreatedWebhook | undefined>();
  const list = useQuery({ queryKey: webhooksKey(projectId), queryFn: () => api.listWebhooks(projectId) });
  const refresh = () => void queries.invalidateQueries({ queryKey: webhooksKey(projectId) });
  const create = useMutation({
    mutationFn: (input: WebhookInput) => api.createWebhook(projectId, input),
    onSuccess: (webhook) => {
      setCreated(webhook);
      setAdding(false);
      refresh();
    },
  });
  const update = useMutation({
    mutationFn: ({ webhook, input }: { webhook: Webhook; input: WebhookInput }) =>
      api.updateWebhook(webhook.id, input),
    onSuccess: () => {
      setEditing(undefined);
      refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (webhook: Webhook) => api.deleteWebhook(webhook.id),
    onSuccess: (_, webhook) => {
      if (state.webhook === String(webhook.id)) {
        set({ webhook: '', dpage: '' });
      }
      refresh();
    },
  });
  const test = useMutation({
    mutationFn: (webhook: Webhook) => api.testWebhook(webhook.id),
    onSuccess: (_, webhook) => {
      set({ webhook: String(webhook.id), dpage: '' });
      void queries.invalidateQueries({ queryKey: ['deliveries', webhook.id] });
      refresh();
    },
  });
  const outcome: Outcome<Action> = outcomeOf<Action>({
    create: said(create),
    update: said(update, (_, { webhook }) => `The webhook to ${webhook.url} was saved.`),
    remove: said(remove, (_, webhook) => `The webhook to ${webhook.url} was deleted.`),
    test: said(test, (_, webhook) => `A ping is on its way to ${webhook.url}.`),
  });
  const shown = list.data?.content.find((w) => String(w.id) === state.webhook);
  return (
    <div className="webhooks">
      <h3>Webhooks</h3>
      {created ? (
        <div className="notice secret-once" role="status">
          <p>
            The webhook to <strong>{created.url}</strong> was added. Its signing secret is shown this once:
            keep it where the receiver checks the <code>webhook-signature</code> header.
          </p>
          <div className="row secret-row">
            <code className="secret" aria-label="Signing secret">
              {created.secret}
            </code>
            <CopyButton text={created.secret} what="the signing secret" />
          </div>
          <button type="button" className="secondary" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </div>
      ) : null}
      <OutcomeLine of={outcome} only={['update', 'remove', 'test']} />
      <Loaded query={list} what="Loading webhooks" isEmpty={noItems} empty="No webhooks yet.">
        {(data) => (
          <ul className="webhook-list">
            {data.content.map((w) => (
              <li key={w.id} className="webhook">
                {editing === w.id ? (
                  <WebhookForm
                    webhook={w}
                    pending={update.isPending}
                    error={outcome.errorOf('update')}
                    onSubmit={(input) => update.mutate({ webhook: w, input })}
                    onCancel={() => setEditing(undefined)}
                  />
                ) : (
                  <WebhookSummary
                    webhook={w}
                    busy={test.isPending || remove.isPending}
                    onTest={() => test.mutate(w)}
                    onEdit={() => setEditing(w.id)}
                    onDeliveries={() => set({ webhook: String(w.id), dpage: '' })}
                    onDelete={() => {
                      if (window.confirm(`Delete the webhook to ${w.url}? Its deliveries go too.`)) {
                        remove.mutate(w);
                      }
                    }}
                  />
                )}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      {shown ? (
        <Deliveries
          key={shown.id}
          webhook={shown}
          page={Number(state.dpage || 0)}
          onPage={(p) => set({ webhook: state.webhook, dpage: String(p) })}
          onClose={() => set({ webhook: '', dpage: '' })}
          onRead={refresh}
        />
      ) : null}
      {adding ? (
        <div className="card inset">
          <h3>Add a webhook</h3>
          <WebhookForm
            pending={create.isPending}
            error={outcome.errorOf('create')}
            onSubmit={(input) => create.mutate(input)}
            onCancel={() => {
              focusLater(() => addButton.current);
              setAdding(false);
            }}
          />
        </div>
      ) : (
        <button type="button" ref={addButton} onClick={() => setAdding(true)}>
          Add a webhook
        </button>
      )}
    </div>
  );
}

function WebhookSummary({
  webhook: w,
  busy,
  onTest,
  onEdit,
  onDeliveries,
  onDelete,
}: {
  webhook: Webhook;
  busy: boolean;
  onTest: () => void;
  onEdit: () => void;
  onDeliveries: () => void;
  onDelete: () => void;
}) {
  return (
    <article aria-label={`Webhook to ${w.url}`}>
      <div className="webhook-head">
        <span className="url">{w.url}</span>
        <span className={w.active ? 'badge' : 'badge badge-warn'}>{w.active ? 'active' : 'off'}</span>
        <span className="badge badge-plain">{w.format === 'slack' ? 'Slack' : 'signed JSON'}</span>
      </div>
      <p className="webhook-events">
        {w.events.map((e) => (
          <code key={e}>{e}</code>
        ))}
      </p>
      {w.deactivatedReason && !w.active ? (
        <p className="hint">Turned off by the service: {w.deactivatedReason}.</p>
      ) : null}
      <p className="hint">
        Last delivery:{' '}
        {w.lastDelivery ? (
          <>
            <DeliveryStatus status={w.lastDelivery.status} />
            {w.lastDelivery.statusCode !== null ? ` (HTTP ${w.lastDelivery.statusCode})` : ''},{' '}
            <RelativeTime iso={w.lastDelivery.at} />
          </>
        ) : (
          'none yet'
        )}
      </p>
      <div className="row webhook-actions">
        <button
          type="button"
          className="secondary"
          disabled={busy || !w.active}
          onClick={onTest}
          aria-label={`Test ${w.url}`}
        >
          Test
        </button>
        <button
          type="button"
          className="secondary"
          onClick={onDeliveries}
          aria-label={`Deliveries of ${w.url}`}
        >
          Deliveries
        </button>
        <button type="button" className="secondary" onClick={onEdit} aria-label={`Edit ${w.url}`}>
          Edit
        </button>
        <button
          type="button"
          className="danger"
          disabled={busy}
          onClick={onDelete}
          aria-label={`Delete ${w.url}`}
        >
          Delete
        </button>
      </div>
    </article>
  );
}
