/** PostgreSQL extensions the service needs, with what for (said when one is missing). */
export const REQUIRED_EXTENSIONS: Record<string, string> = {
  pg_trgm: 'failure search and similar failures (API.md, "Failure triage across runs")',
};

/**
 * Fails the start with a message that says what to install when PostgreSQL cannot provide an extension the
 * migrations create (rather than the migration's "could not open extension control file"). Checked before the
 * migrations, on every start: an extension installed once stays, and one never installed is found here.
 */
export async function requireExtensions(query: (sql: string) => Promise<{ name: string }[]>): Promise<void> {
  const available = new Set((await query('SELECT name FROM pg_available_extensions')).map((r) => r.name));
  const missing = Object.keys(REQUIRED_EXTENSIONS).filter((name) => !available.has(name));
  if (missing.length) {
    throw new Error(
      `PostgreSQL lacks the extension${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, needed for ` +
        `${missing.map((m) => REQUIRED_EXTENSIONS[m]).join('; ')}. Install PostgreSQL's contrib modules on the ` +
        `database server (Debian and Ubuntu: the postgresql-contrib package; the official Docker images and the ` +
        `embedded PostgreSQL have them), then start the service again.`,
    );
  }
}
