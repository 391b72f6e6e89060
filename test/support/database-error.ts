/** An error as TypeORM wraps PostgreSQL's: the SQLSTATE in `driverError.code` (for unit tests of what reads it). */
export function databaseError(code: string, message: string = code): Error {
  return Object.assign(new Error(message), { driverError: { code } });
}
