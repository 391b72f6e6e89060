import { Link, Outlet, useParams } from 'react-router';
import { Page } from '../ui/components';

export function NotFound() {
  return (
    <Page title="Page not found">
      <p>
        There is no page here. <Link to="/">Go to your projects</Link>.
      </p>
    </Page>
  );
}

/**
 * The routes under it, when each id in their path is a number (`/projects/abc/tests` is no page: said so here, not
 * asked of the API as project NaN).
 */
export function NumericIds() {
  const params = useParams();
  const bad = Object.entries(params).some(
    ([name, value]) => name.endsWith('Id') && !/^\d{1,18}$/.test(value ?? ''),
  );
  return bad ? <NotFound /> : <Outlet />;
}
