import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { PasswordHasher } from '../../src/users/password-hasher.js';
import { UserEntity } from '../../src/users/user.entity.js';

export const DEFAULT_PASSWORD = 'a-long-enough-password-42';

export function makeUser(overrides: Partial<UserEntity> = {}): UserEntity {
  const user = new UserEntity();
  Object.assign(user, {
    id: String(Math.floor(Math.random() * 1e9)),
    email: `user-${randomBytes(4).toString('hex')}@example.com`,
    fullName: 'Test User',
    passwordHash: null,
    admin: false,
    enabled: true,
    authSource: 'LOCAL',
    emailVerified: true,
    twoFactorEnabled: false,
    tokensValidAfter: null,
    createdAt: new Date(),
    updatedAt: new Date(),
    ...overrides,
  });
  return user;
}

/** Stores a local user with a known password. */
export async function insertUser(
  dataSource: DataSource,
  overrides: Partial<UserEntity> & { password?: string } = {},
): Promise<UserEntity & { password: string }> {
  const { password = DEFAULT_PASSWORD, ...rest } = overrides;
  const passwordHash = await new PasswordHasher().hash(password);
  const { id: _ignored, ...fields } = makeUser({ passwordHash, ...rest });
  const saved = await dataSource.getRepository(UserEntity).save(fields);
  return Object.assign(saved, { password });
}
