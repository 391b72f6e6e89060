import { useQuery } from '@tanstack/react-query';
import { useApi } from '../../session-context';
import { ErrorMessage, formatDate, Loading, Page } from '../../ui/components';
import { AdminNav } from './AdminNav';

export function AdminSubscription() {
  const api = useApi();
  const subscription = useQuery({ queryKey: ['subscription'], queryFn: () => api.subscription() });
  return (
    <Page title="Subscription">
      <AdminNav />
      {subscription.isPending ? (
        <Loading />
      ) : subscription.error ? (
        <ErrorMessage error={subscription.error} />
      ) : (
        <dl className="card narrow facts">
          <dt>Plan</dt>
          <dd>{subscription.data.plan}</dd>
          <dt>Status</dt>
          <dd>{subscription.data.status.replace('_', ' ').toLowerCase()}</dd>
          <dt>Seats</dt>
          <dd>
            {subscription.data.seatsUsed} of {subscription.data.seats} used
          </dd>
          <dt>Renews or ends</dt>
          <dd>{formatDate(subscription.data.periodEnd)}</dd>
        </dl>
      )}
    </Page>
  );
}
