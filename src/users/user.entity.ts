import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type AuthSource = 'LOCAL' | 'LDAP';

@Entity('users')
export class UserEntity {
  // bigint arrives as a string from pg: ids stay exact up to 2^63-1 and are rendered as numbers in the API.
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  /** Stored lower-case; unique. */
  @Column({ type: 'varchar', length: 320, unique: true })
  email: string;

  @Column({ name: 'full_name', type: 'varchar', length: 200 })
  fullName: string;

  @Column({ name: 'password_hash', type: 'varchar', length: 255, nullable: true })
  passwordHash: string | null;

  @Column({ type: 'boolean', default: false })
  admin: boolean;

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  @Column({ name: 'auth_source', type: 'varchar', length: 16, default: 'LOCAL' })
  authSource: AuthSource;

  /** A directory user's entry id (entryUUID, objectGUID, or the DN): what ties the account to its entry. */
  @Column({ name: 'directory_id', type: 'varchar', length: 512, nullable: true, select: true })
  directoryId: string | null;

  @Column({ name: 'email_verified', type: 'boolean', default: false })
  emailVerified: boolean;

  /** Mirrors an active two-factor secret (kept in the same transaction by the two-factor module). */
  @Column({ name: 'two_factor_enabled', type: 'boolean', default: false })
  twoFactorEnabled: boolean;

  /**
   * Access JWTs issued at or before this instant are refused (compared in milliseconds with the token's `iat_ms`):
   * set when every session ends (a password reset, a disabled account). Null: no cut-off.
   */
  @Column({ name: 'tokens_valid_after', type: 'timestamptz', nullable: true })
  tokensValidAfter: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
