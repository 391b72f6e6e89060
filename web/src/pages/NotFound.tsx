import { Link } from 'react-router';
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
