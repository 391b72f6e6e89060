import { requireExtensions } from './extensions.js';

describe(requireExtensions.name, () => {
  it('passes where PostgreSQL has pg_trgm', async () => {
    const sut = requireExtensions(() => Promise.resolve([{ name: 'plpgsql' }, { name: 'pg_trgm' }]));
    await expect(sut).resolves.toBeUndefined();
  });

  it('fails the start naming the missing extension, what needs it and what to install', async () => {
    const sut = requireExtensions(() => Promise.resolve([{ name: 'plpgsql' }]));
    await expect(sut).rejects.toThrow(
      /^PostgreSQL lacks the extension pg_trgm, needed for failure search and similar failures .*postgresql-contrib/,
    );
  });
});
