import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { KeyValueStore } from '../infra/kv/key-value-store.js';

/** The state of one refresh-token family, kept in the key-value store under `rf:<familyId>`. */
interface FamilyState {
  /** user id */
  u: string;
  /** SHA-256 of the current (only valid) token's secret */
  h: string;
  /** when the family was created, ms since the epoch */
  c: number;
}

export type RotationOutcome =
  | { kind: 'rotated'; userId: string; token: string; familyId: string }
  /** Malformed, expired, revoked: nothing to revoke. */
  | { kind: 'invalid' }
  /** A superseded token came back: the family has been revoked. */
  | { kind: 'reused'; userId: string; familyId: string };

/**
 * Opaque rotating refresh tokens, `<familyId>.<secret>`. Each refresh replaces the family's current secret
 * with a compare-and-swap, so two concurrent refreshes of one token cannot both succeed (no fork): the loser
 * presents a superseded token, which is reuse, and revokes the family.
 */
@Injectable()
export class RefreshTokenService {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly config: AppConfig,
  ) {}

  async issue(userId: string): Promise<string> {
    const familyId = randomBytes(16).toString('base64url');
    const secret = randomBytes(32).toString('base64url');
    const state: FamilyState = { u: userId, h: digest(secret), c: Date.now() };
    await this.kv.set(familyKey(familyId), JSON.stringify(state), this.ttl);
    return `${familyId}.${secret}`;
  }

  async rotate(token: string | undefined): Promise<RotationOutcome> {
    const parsed = parse(token);
    if (!parsed) {
      return { kind: 'invalid' };
    }
    const key = familyKey(parsed.familyId);
    const raw = await this.kv.get(key);
    if (!raw) {
      return { kind: 'invalid' };
    }
    const state = JSON.parse(raw) as FamilyState;
    if (await this.revokedForUser(state)) {
      await this.kv.delete(key);
      return { kind: 'invalid' };
    }
    if (!sameDigest(state.h, digest(parsed.secret))) {
      await this.kv.delete(key);
      return { kind: 'reused', userId: state.u, familyId: parsed.familyId };
    }
    const secret = randomBytes(32).toString('base64url');
    const next = JSON.stringify({ ...state, h: digest(secret) } satisfies FamilyState);
    if (!(await this.kv.compareAndSwap(key, raw, next, this.ttl))) {
      // Another request rotated this very token first: it is being used twice.
      await this.kv.delete(key);
      return { kind: 'reused', userId: state.u, familyId: parsed.familyId };
    }
    return {
      kind: 'rotated',
      userId: state.u,
      token: `${parsed.familyId}.${secret}`,
      familyId: parsed.familyId,
    };
  }

  /**
   * Revokes the token's family; returns its user and session (see sessionOf) when the token named a live family.
   */
  async revoke(token: string | undefined): Promise<{ userId: string; session: string } | undefined> {
    const parsed = parse(token);
    if (!parsed) {
      return undefined;
    }
    const raw = await this.kv.get(familyKey(parsed.familyId));
    await this.kv.delete(familyKey(parsed.familyId));
    return raw
      ? { userId: (JSON.parse(raw) as FamilyState).u, session: sessionOf(parsed.familyId) }
      : undefined;
  }

  /** Revokes every family of the user created until now (password reset, disabled account). */
  async revokeAllForUser(userId: string): Promise<void> {
    await this.kv.set(revokedKey(userId), String(Date.now()), this.ttl);
  }

  private async revokedForUser(state: FamilyState): Promise<boolean> {
    const revokedAt = await this.kv.get(revokedKey(state.u));
    return revokedAt !== null && state.c <= Number(revokedAt);
  }

  private get ttl(): number {
    return this.config.auth.refreshTtlSeconds;
  }
}

/**
 * The sign-in session a family's access tokens name (their `sid`), so that logout can revoke them: a digest of the
 * family id, not the id itself, which is half of the refresh token and would otherwise be readable by the page.
 */
export function sessionOf(familyId: string): string {
  return createHash('sha256').update(`session:${familyId}`).digest('base64url').slice(0, 22);
}

/** The session of a refresh token as issued or rotated. */
export function sessionOfToken(token: string): string | undefined {
  const parsed = parse(token);
  return parsed && sessionOf(parsed.familyId);
}

const familyKey = (familyId: string): string => `rf:${familyId}`;
const revokedKey = (userId: string): string => `rf-revoked:${userId}`;

function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function parse(token: string | undefined): { familyId: string; secret: string } | undefined {
  const match = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(token ?? '');
  return match ? { familyId: match[1], secret: match[2] } : undefined;
}
