import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { ProjectRole } from './roles.js';

@Entity('projects')
export class ProjectEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ type: 'varchar', length: 32, unique: true })
  key: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'varchar', length: 2000, nullable: true })
  description: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /** Set when the project was deleted: hidden from every read while the purge removes it (src/retention/). */
  @Column({ name: 'deleting_at', type: 'timestamptz', nullable: true, select: false })
  deletingAt: Date | null;
}

@Entity('project_members')
export class ProjectMemberEntity {
  @PrimaryColumn({ name: 'project_id', type: 'bigint' })
  projectId: string;

  @PrimaryColumn({ name: 'user_id', type: 'bigint' })
  userId: string;

  @Column({ type: 'varchar', length: 16 })
  role: ProjectRole;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

@Entity('groups')
export class GroupEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  /** Unique by exact, case-sensitive name: directory groups map onto groups by this name. */
  @Column({ type: 'varchar', length: 200, unique: true })
  name: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

@Entity('group_bindings')
export class GroupBindingEntity {
  @PrimaryColumn({ name: 'group_id', type: 'bigint' })
  groupId: string;

  @PrimaryColumn({ name: 'project_id', type: 'bigint' })
  projectId: string;

  @Column({ type: 'varchar', length: 16 })
  role: ProjectRole;
}

export type GroupMemberSource = 'MANUAL' | 'DIRECTORY';

@Entity('group_members')
export class GroupMemberEntity {
  @PrimaryColumn({ name: 'group_id', type: 'bigint' })
  groupId: string;

  @PrimaryColumn({ name: 'user_id', type: 'bigint' })
  userId: string;

  /** MANUAL: added in Admin → Groups. DIRECTORY: synced at directory login, replaced at each login. */
  @PrimaryColumn({ type: 'varchar', length: 16 })
  source: GroupMemberSource;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

export type InvitationKind = 'PROJECT' | 'WORKSPACE';

@Entity('invitations')
export class InvitationEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  @Column({ type: 'varchar', length: 16 })
  kind: InvitationKind;

  @Column({ name: 'project_id', type: 'bigint', nullable: true })
  projectId: string | null;

  @Column({ type: 'varchar', length: 320 })
  email: string;

  @Column({ type: 'varchar', length: 16, nullable: true })
  role: ProjectRole | null;

  @Column({ name: 'token_hash', type: 'char', length: 64 })
  tokenHash: string;

  @Column({ name: 'invited_by', type: 'bigint', nullable: true })
  invitedBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'accepted_at', type: 'timestamptz', nullable: true })
  acceptedAt: Date | null;

  /** Null until the mail module has sent the invitation (it sends pending ones when it starts). */
  @Column({ name: 'mailed_at', type: 'timestamptz', nullable: true })
  mailedAt: Date | null;
}
