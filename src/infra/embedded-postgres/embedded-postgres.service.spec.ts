import { whyNotStarted } from './embedded-postgres.service.js';

describe('whyNotStarted', () => {
  it("gives PostgreSQL's reason since its last start: the port taken", () => {
    const said = [
      '2026-11-25 04:50:00.000 UTC [9] LOG:  starting PostgreSQL 18.4 on x86_64-pc-linux-gnu',
      '2026-11-25 04:50:00.001 UTC [9] FATAL:  an older failure',
      '2026-11-25 04:57:56.542 UTC [11760] LOG:  starting PostgreSQL 18.4 on x86_64-pc-linux-gnu',
      '2026-11-25 04:57:56.543 UTC [11760] LOG:  could not bind IPv4 address "127.0.0.1": Address already in use',
      '2026-11-25 04:57:56.543 UTC [11760] HINT:  Is another postmaster already running on port 54400?',
      '2026-11-25 04:57:56.543 UTC [11760] WARNING:  could not create listen socket for "127.0.0.1"',
      '2026-11-25 04:57:56.543 UTC [11760] FATAL:  could not create any TCP/IP sockets',
      '2026-11-25 04:57:56.548 UTC [11760] LOG:  database system is shut down',
    ];
    expect(whyNotStarted(undefined, said)).toBe(
      'could not bind IPv4 address "127.0.0.1": Address already in use HINT: Is another postmaster already running on port 54400? FATAL: could not create any TCP/IP sockets',
    );
  });

  it('falls back to the error, then to the last lines, then to saying it gave no reason', () => {
    expect(whyNotStarted(new Error('spawn EACCES'), ['LOG:  starting PostgreSQL 18.4'])).toBe('spawn EACCES');
    expect(whyNotStarted(undefined, ['postgres: unexpected output', 'more'])).toBe('postgres: unexpected output more');
    expect(whyNotStarted(undefined, [])).toBe('it stopped without saying why');
  });
});
