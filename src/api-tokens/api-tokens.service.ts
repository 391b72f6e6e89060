import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AUDIT_EVENT, AuditRecord } from '../audit/audit.events.js';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { Page, pageRequest, toPage } from '../common/paging/page.js';
import type { PageQueryDto } from '../common/paging/page-query.dto.js';
import { ApiTokenAuthenticator } from './api-token.authenticator.js';
import type { ApiTokenEntity } from './api-token.entity.js';
import { ApiTokensRepository } from './api-tokens.repository.js';
import type { ApiTokenDto, CreateApiTokenDto, CreatedApiTokenDto } from './dto/api-token.dto.js';

const PREFIX_LENGTH = 12;

@Injectable()
export class ApiTokensService {
  constructor(
    private readonly tokens: ApiTokensRepository,
    private readonly authenticator: ApiTokenAuthenticator,
    private readonly events: EventEmitter2,
  ) {}

  async create(user: AuthUser, dto: CreateApiTokenDto, ip: string): Promise<CreatedApiTokenDto> {
    const expiresAt = dto.expiresAt ? new Date(dto.expiresAt) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw AppError.validation('expiresAt must be in the future');
    }
    const token = `tms_${randomBytes(32).toString('base64url')}`;
    const saved = await this.tokens.create({
      userId: user.id,
      name: dto.name.trim(),
      prefix: token.slice(0, PREFIX_LENGTH),
      tokenHash: ApiTokenAuthenticator.hash(token),
      expiresAt,
    });
    this.audit({
      type: 'API_TOKEN_CREATED',
      actorId: user.id,
      ip,
      target: `api-token:${saved.id}`,
      details: { name: saved.name },
    });
    const { lastUsedAt: _unused, ...dtoFields } = toApiTokenDto(saved);
    return { ...dtoFields, token };
  }

  async list(user: AuthUser, query: PageQueryDto): Promise<Page<ApiTokenDto>> {
    const page = pageRequest(query, ['createdAt', 'name', 'lastUsedAt'] as const, [
      { field: 'createdAt', direction: 'DESC' },
    ]);
    const [rows, total] = await this.tokens.listOf(user.id, page);
    return toPage(rows.map(toApiTokenDto), total, page);
  }

  async revoke(user: AuthUser, id: string, ip: string): Promise<void> {
    const token = /^\d{1,18}$/.test(id) ? await this.tokens.deleteOf(user.id, id) : null;
    if (!token) {
      throw AppError.notFound(`API key ${id} not found`);
    }
    await this.authenticator.revoked(token.tokenHash, user.id);
    this.audit({
      type: 'API_TOKEN_REVOKED',
      actorId: user.id,
      ip,
      target: `api-token:${id}`,
      details: { name: token.name },
    });
  }

  private audit(record: AuditRecord): void {
    this.events.emit(AUDIT_EVENT, record);
  }
}

function toApiTokenDto(t: ApiTokenEntity): ApiTokenDto {
  return {
    id: Number(t.id),
    name: t.name,
    prefix: t.prefix,
    createdAt: t.createdAt.toISOString(),
    lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
    expiresAt: t.expiresAt?.toISOString() ?? null,
  };
}
