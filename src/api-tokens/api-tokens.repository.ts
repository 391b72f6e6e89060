import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { PageRequest } from '../common/paging/page.js';
import { ApiTokenEntity } from './api-token.entity.js';

export interface TokenPrincipal {
  tokenId: string;
  userId: string;
  admin: boolean;
  expiresAt: Date | null;
}

@Injectable()
export class ApiTokensRepository {
  constructor(@InjectRepository(ApiTokenEntity) private readonly tokens: Repository<ApiTokenEntity>) {}

  create(
    token: Pick<ApiTokenEntity, 'userId' | 'name' | 'prefix' | 'tokenHash' | 'expiresAt'>,
  ): Promise<ApiTokenEntity> {
    return this.tokens.save(this.tokens.create(token));
  }

  listOf(
    userId: string,
    page: PageRequest<'createdAt' | 'name' | 'lastUsedAt'>,
  ): Promise<[ApiTokenEntity[], number]> {
    const order = Object.fromEntries(page.sort.map((s) => [s.field, s.direction]));
    return this.tokens.findAndCount({
      where: { userId },
      order: { ...order, id: 'DESC' },
      skip: page.offset,
      take: page.size,
    });
  }

  /** Deletes the user's token; false when the user has no such token. */
  async deleteOf(userId: string, id: string): Promise<ApiTokenEntity | null> {
    const token = await this.tokens.findOneBy({ id, userId });
    if (token) {
      await this.tokens.delete({ id });
    }
    return token;
  }

  async deleteAllOf(userId: string): Promise<number> {
    return (await this.tokens.delete({ userId })).affected ?? 0;
  }

  /** The token's owner, when the token exists and its owner is enabled: one indexed lookup. */
  async principalByHash(tokenHash: string): Promise<TokenPrincipal | null> {
    const rows: { id: string; user_id: string; admin: boolean; expires_at: Date | null }[] =
      await this.tokens.query(
        `SELECT t.id, t.user_id, u.admin, t.expires_at
         FROM api_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.token_hash = $1 AND u.enabled`,
        [tokenHash],
      );
    const row = rows[0];
    return row
      ? { tokenId: String(row.id), userId: String(row.user_id), admin: row.admin, expiresAt: row.expires_at }
      : null;
  }

  /** Records use at most once a minute per token, whatever the request rate. */
  async touch(tokenId: string): Promise<void> {
    await this.tokens.query(
      `UPDATE api_tokens SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [tokenId],
    );
  }
}
