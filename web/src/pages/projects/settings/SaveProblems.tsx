import { ErrorMessage } from '../../../ui/components';
import type { problemsOf } from './settings-form';

/**
 * Under a settings form: what the API's refusal of a save said that names no field of the form (`other`), and the
 * refusal itself when it named nothing at all (a 403, a 503): what `problemsOf` did not place beside an input.
 */
export function SaveProblems({ error, server }: { error: unknown; server: ReturnType<typeof problemsOf> }) {
  const unplaced = error && !Object.keys(server.byField).length && !server.other.length ? error : undefined;
  return (
    <>
      {server.other.length ? (
        <p className="error" role="alert">
          {server.other.join('; ')}
        </p>
      ) : null}
      <ErrorMessage error={unplaced} />
    </>
  );
}
