import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';
import { InvitationEntity } from './entities.js';
import type { ProjectRole } from './roles.js';
import { ROLE_ORDER_SQL } from './roles.js';


@Injectable()
export class InvitationsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  create(fields: Pick<InvitationEntity, 'kind' | 'projectId' | 'email' | 'role' | 'tokenHash' | 'invitedBy' | 'expiresAt'>): Promise<InvitationEntity> {
    const repo = this.db.getRepository(InvitationEntity);
    return repo.save(repo.create(fields));
  }

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Marks the invitation used and returns it, or null when it is unknown, expired or already used. */
  async consume(tx: EntityManager, tokenHash: string): Promise<InvitationEntity | null> {
    const [rows]: [InvitationEntity[], number] = await tx.query(
      `UPDATE invitations SET accepted_at = now()
        WHERE token_hash = $1 AND accepted_at IS NULL AND expires_at > now()
        RETURNING id, kind, project_id AS "projectId", email, role`,
      [tokenHash],
    );
    return rows[0] ?? null;
  }

  findUserByEmail(tx: EntityManager, email: string): Promise<UserEntity | null> {
    return tx.getRepository(UserEntity).findOneBy({ email });
  }

  createUser(tx: EntityManager, fields: Partial<UserEntity>): Promise<UserEntity> {
    return tx.getRepository(UserEntity).save(tx.getRepository(UserEntity).create(fields));
  }

  /** Whether the project is there and not being deleted, held so until the commit (FOR KEY SHARE, as a member row). */
  async projectLive(tx: EntityManager, projectId: string): Promise<boolean> {
    const rows: unknown[] = await tx.query(
      'SELECT 1 FROM projects WHERE id = $1 AND deleting_at IS NULL FOR KEY SHARE',
      [projectId],
    );
    return rows.length > 0;
  }

  /** Adds the member, never lowering a direct role they already hold. */
  async grantAtLeast(tx: EntityManager, projectId: string, userId: string, role: ProjectRole): Promise<ProjectRole> {
    const rows: { role: ProjectRole }[] = await tx.query(
      `INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (project_id, user_id) DO UPDATE
         SET role = CASE WHEN array_position(${ROLE_ORDER_SQL}, EXCLUDED.role) > array_position(${ROLE_ORDER_SQL}, project_members.role)
                         THEN EXCLUDED.role ELSE project_members.role END
       RETURNING role`,
      [projectId, userId, role],
    );
    return rows[0].role;
  }
}
