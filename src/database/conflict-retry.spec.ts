import { databaseError } from '../../test/support/database-error.js';
import { retryConflicts } from './conflict-retry.js';

/** A transaction that fails with these errors, one a try, then answers 'stored'; and how often it was run. */
function failing(...errors: Error[]) {
  const run = {
    tries: 0,
    transaction: async () => {
      const error = errors[run.tries++];
      if (error) {
        throw error;
      }
      return 'stored';
    },
  };
  return run;
}

describe('retryConflicts', () => {
  it('runs a transaction rolled back by a deadlock or a serialization failure again', async () => {
    const run = failing(databaseError('40P01'), databaseError('40001'));
    await expect(retryConflicts(run.transaction)).resolves.toBe('stored');
    expect(run.tries).toBe(3);
  });

  it('gives up after its tries, with the last error', async () => {
    const last = databaseError('40P01');
    const run = failing(databaseError('40P01'), databaseError('40P01'), last);
    await expect(retryConflicts(run.transaction)).rejects.toBe(last);
    expect(run.tries).toBe(3);
  });

  it('does not run again what failed otherwise, nor a lock that was not granted in time', async () => {
    for (const error of [databaseError('23505'), databaseError('55P03'), new Error('Run 4 not found')]) {
      const run = failing(error);
      await expect(retryConflicts(run.transaction)).rejects.toBe(error);
      expect(run.tries).toBe(1);
    }
  });
});
