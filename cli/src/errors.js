/**
 * The exit codes of API.md's "Command-line client" table: what a CI job can act on.
 * 0 done; 1 the gate failed; 2 bad usage, bad input or a request the service refused; 3 the service unreachable.
 */
export const EXIT = Object.freeze({ OK: 0, GATE_FAILED: 1, USAGE: 2, UNREACHABLE: 3 });

/** An error that ends the command with a one-line message and an exit code. */
export class CliError extends Error {
  /**
   * @param {string} message one line a person can act on
   * @param {number} exitCode
   */
  constructor(message, exitCode) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** @param {string} message */
export const usageError = (message) => new CliError(message, EXIT.USAGE);

/** @param {string} message */
export const unreachableError = (message) => new CliError(message, EXIT.UNREACHABLE);

/** The service answered with an error: a 4xx is the caller's to fix (exit 2), a 5xx the service's (exit 3). */
export class ApiError extends CliError {
  /**
   * @param {number} status
   * @param {string} message the service's own `message`, or what stood in the body
   * @param {string} what the request, e.g. "GET /api/runs/7"
   */
  constructor(status, message, what) {
    super(`${what}: ${status} ${message}`, status >= 500 ? EXIT.UNREACHABLE : EXIT.USAGE);
    this.name = 'ApiError';
    this.status = status;
    this.serverMessage = message;
  }
}
