import { databaseError } from '../../../test/support/database-error.js';
import { AppError, ErrorCode } from '../../common/app-error.js';
import { isTransient } from './batch-runner.js';

describe('isTransient: a batch left for later, uncounted, rather than failed', () => {
  it('takes a conflict with a concurrent transaction (deadlock, serialization, lock timeout) as transient', () => {
    for (const code of ['40P01', '40001', '55P03']) {
      expect(isTransient(databaseError(code))).toBe(true);
    }
  });

  it('takes the database away or a dependency unavailable as transient', () => {
    expect(isTransient(databaseError('57P01'))).toBe(true);
    expect(isTransient(new AppError(ErrorCode.UNAVAILABLE, 'The broker is unavailable'))).toBe(true);
  });

  it('counts what is the message’s doing against it', () => {
    expect(isTransient(databaseError('22001'))).toBe(false);
    expect(isTransient(databaseError('23505'))).toBe(false);
    expect(isTransient(AppError.validation('bad'))).toBe(false);
  });
});
