import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { Delivery, Webhook } from '../../../api/client';
import { useApi } from '../../../session-context';
import { ErrorMessage, formatDate, Loaded, noItems, Notice, Pager } from '../../../ui/components';
import { RelativeTime } from '../../../ui/relative-time';

export const deliveriesKey = (webhookId: number) => ['deliveries', webhookId] as const;

/** A delivery's status in words and colour. */
export function DeliveryStatus({ status }: { status: Delivery['status'] }) {
  const tone = status === 'DELIVERED' ? 'passed' : status === 'FAILED' ? 'failed' : 'pending';
  return <span className={`delivery-status delivery-${tone}`}>{status.toLowerCase()}</span>;
}

/** One webhook's deliveries, newest first: status, attempts, the receiver's answer or the error, and Redeliver. */
export function Deliveries({
  webhook,
  page,
  onPage,
  onClose,
  onRead,
}: {
  webhook: Webhook;
  page: number;
  onPage: (page: number) => void;
  onClose: () => void;
  /** Each time the deliveries were read anew: the webhook's own "last delivery" may have changed too. */
  onRead?: () => void;
}) {
  const api = useApi();
  const queries = useQueryClient();
  const list = useQuery({
    queryKey: [...deliveriesKey(webhook.id), page],
    queryFn: () => api.listDeliveries(webhook.id, page),
    placeholderData: keepPreviousData,
    // Pending deliveries change on their own: look again while any is on its way.
    refetchInterval: (q) => (q.state.data?.content.some((d) => d.status === 'PENDING') ? 2000 : false),
  });
  const readAt = list.dataUpdatedAt;
  useEffect(() => {
    if (readAt) {
      onRead?.();
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once per read, whatever the callback's identity
  }, [readAt]);
  const redeliver = useMutation({
    mutationFn: (delivery: Delivery) => api.redeliver(webhook.id, delivery.id),
    onSuccess: () => void queries.invalidateQueries({ queryKey: deliveriesKey(webhook.id) }),
  });
  return (
    <section className="deliveries" aria-labelledby={`deliveries-${webhook.id}`}>
      <div className="section-head">
        <h3 id={`deliveries-${webhook.id}`}>
          Deliveries to <span className="url">{webhook.url}</span>
        </h3>
        <button type="button" className="secondary" onClick={onClose} aria-label="Close the deliveries">
          Close
        </button>
      </div>
      {redeliver.error ? <ErrorMessage error={redeliver.error} /> : null}
      {redeliver.isSuccess ? <Notice>Delivery {redeliver.variables.id} is on its way again.</Notice> : null}
      <Loaded
        query={list}
        what="Loading deliveries"
        isEmpty={noItems}
        empty="Nothing sent to this webhook yet."
      >
        {(data) => (
          <>
            <div className="table-wrap">
              <table className="deliveries-table stacked">
                <caption className="visually-hidden">Deliveries of the webhook to {webhook.url}</caption>
                <thead>
                  <tr>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Response</th>
                    <th scope="col">When</th>
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.content.map((d) => (
                    <tr key={d.id}>
                      <td>
                        <code>{d.event}</code>
                        <span className="hint block">#{d.id}</span>
                      </td>
                      <td>
                        <DeliveryStatus status={d.status} />
                        {d.status === 'PENDING' && d.nextAttemptAt ? (
                          <span className="hint block">
                            next at <time dateTime={d.nextAttemptAt}>{formatDate(d.nextAttemptAt)}</time>
                          </span>
                        ) : null}
                      </td>
                      <td data-label="Attempts">{d.attempts}</td>
                      <td className="delivery-response" data-label={d.attempts ? 'Response' : undefined}>
                        {d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : d.attempts ? '—' : ''}
                        {d.lastError && d.lastError !== `HTTP ${d.lastStatusCode}` ? (
                          <span className="hint block delivery-error">{d.lastError}</span>
                        ) : null}
                      </td>
                      <td>
                        <RelativeTime iso={d.deliveredAt ?? d.createdAt} />
                      </td>
                      <td>
                        <button
                          type="button"
                          className="secondary"
                          disabled={redeliver.isPending || !webhook.active}
                          title={webhook.active ? undefined : 'Turn the webhook on to redeliver'}
                          onClick={() => redeliver.mutate(d)}
                          aria-label={`Redeliver delivery ${d.id}`}
                        >
                          Redeliver
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager page={page} totalPages={data.totalPages} onPage={onPage} />
          </>
        )}
      </Loaded>
    </section>
  );
}
