import { Injectable, Optional } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AUDIT_EVENT, type AuditRecord } from '../audit/audit.events.js';
import { AppError, ErrorCode } from '../common/app-error.js';
import { isUniqueViolation } from '../common/db-errors.js';
import type { UserEntity } from '../users/user.entity.js';
import { UserCache } from '../users/user-cache.js';
import { UsersRepository } from '../users/users.repository.js';
import {
  AmbiguousEntryError,
  type DirectoryEntry,
  DirectoryUnavailableError,
  LdapDirectory,
} from './ldap-directory.js';

/** Why a directory sign-in did not sign anyone in (audited with LOGIN_FAILURE; the client gets the generic 401). */
export type DirectoryRefusal =
  | 'unknown user or wrong password'
  | 'account disabled'
  | 'email of a local account'
  | 'email of another directory account';

/**
 * Sign-in through the directory (when SVC_AUTH_LDAP_ENABLED=true): the directory checks the password; the
 * first sign-in creates the local user (authSource LDAP, email and full name from the entry, refreshed at each
 * sign-in), and each one replaces the user's DIRECTORY group memberships by the directory groups that name a
 * service Group exactly (MANUAL memberships stay).
 */
@Injectable()
export class DirectoryLogin {
  constructor(
    private readonly users: UsersRepository,
    private readonly userCache: UserCache,
    @InjectDataSource() private readonly db: DataSource,
    private readonly events: EventEmitter2,
    @Optional() private readonly directory?: LdapDirectory,
  ) {}

  get enabled(): boolean {
    return Boolean(this.directory);
  }

  /** The signed-in user, or why not. Throws 503 (AppError UNAVAILABLE) when the directory cannot be asked. */
  async signIn(username: string, password: string, ip: string): Promise<UserEntity | DirectoryRefusal> {
    const directory = this.directory!;
    let entry: DirectoryEntry | null;
    const wasDown = directory.state === 'down';
    try {
      entry = await directory.authenticate(username, password);
    } catch (error) {
      if (error instanceof AmbiguousEntryError) {
        throw AppError.unprocessable(error.message);
      }
      if (!(error instanceof DirectoryUnavailableError)) {
        throw error;
      }
      if (!wasDown) {
        this.audit({
          type: 'DIRECTORY_UNAVAILABLE',
          actorEmail: username,
          ip,
          details: { url: directory.url, reason: error.reason },
        });
      }
      throw new AppError(
        ErrorCode.UNAVAILABLE,
        `The directory (${directory.url}) is unavailable; retry later, or sign in with a local account`,
      );
    }
    if (!entry) {
      return 'unknown user or wrong password';
    }
    if (!entry.email) {
      throw AppError.unprocessable(
        `The directory entry ${entry.dn} has no mail attribute: the service needs an email address`,
      );
    }
    const user = await this.provision(entry);
    if (typeof user === 'string') {
      return user;
    }
    if (!user.enabled) {
      return 'account disabled';
    }
    await this.syncGroups(user, entry.groups, ip);
    return user;
  }

  /**
   * The local user of the entry, found by the entry's immutable id (never by the mail it carries: a user able to
   * edit their own entry must not take over another account), created at the first sign-in, its email and name
   * refreshed; or why not. An LDAP account from before ids were kept is claimed by the entry with its email.
   */
  private async provision(entry: DirectoryEntry): Promise<UserEntity | DirectoryRefusal> {
    const fullName = entry.fullName.slice(0, 200);
    for (let attempt = 0; ; attempt++) {
      const byId = await this.users.findByDirectoryId(entry.id);
      const byEmail = byId?.email === entry.email ? byId : await this.users.findByEmail(entry.email);
      if (byEmail && byEmail !== byId) {
        if (byEmail.authSource !== 'LDAP') {
          return 'email of a local account';
        }
        if (byEmail.directoryId !== null || byId) {
          return 'email of another directory account';
        }
      }
      const existing = byId ?? byEmail;
      if (existing) {
        const changes: Partial<UserEntity> = {};
        if (existing.directoryId !== entry.id) {
          changes.directoryId = entry.id;
        }
        if (existing.email !== entry.email) {
          changes.email = entry.email;
        }
        if (existing.fullName !== fullName) {
          changes.fullName = fullName;
        }
        if (Object.keys(changes).length) {
          await this.users.update(existing.id, changes);
          Object.assign(existing, changes);
          await this.userCache.invalidate(existing.id);
        }
        return existing;
      }
      try {
        return await this.users.save({
          email: entry.email,
          fullName,
          passwordHash: null,
          authSource: 'LDAP',
          directoryId: entry.id,
          emailVerified: true,
        });
      } catch (error) {
        // Two first sign-ins at once: the other one created the user.
        if (!isUniqueViolation(error) || attempt > 0) {
          throw error;
        }
      }
    }
  }

  /** Replaces the user's DIRECTORY memberships by the groups named exactly as directory groups; audits a change. */
  private async syncGroups(user: UserEntity, directoryGroups: string[], ip: string): Promise<void> {
    const changes = await this.db.transaction(async (tx) => {
      const wanted: { id: string; name: string }[] = await tx.query(
        'SELECT id, name FROM groups WHERE name = ANY($1::varchar[])',
        [[...new Set(directoryGroups)]],
      );
      const current: { id: string; name: string }[] = await tx.query(
        `SELECT g.id, g.name FROM group_members m JOIN groups g ON g.id = m.group_id
          WHERE m.user_id = $1 AND m.source = 'DIRECTORY' FOR UPDATE OF m`,
        [user.id],
      );
      const wantedIds = new Set(wanted.map((g) => String(g.id)));
      const currentIds = new Set(current.map((g) => String(g.id)));
      const removed = current.filter((g) => !wantedIds.has(String(g.id)));
      const added = wanted.filter((g) => !currentIds.has(String(g.id)));
      if (removed.length) {
        await tx.query(
          `DELETE FROM group_members WHERE user_id = $1 AND source = 'DIRECTORY' AND group_id = ANY($2::bigint[])`,
          [user.id, removed.map((g) => g.id)],
        );
      }
      if (added.length) {
        await tx.query(
          `INSERT INTO group_members (group_id, user_id, source)
           SELECT g, $1, 'DIRECTORY' FROM unnest($2::bigint[]) AS g ON CONFLICT DO NOTHING`,
          [user.id, added.map((g) => g.id)],
        );
      }
      return { added: added.map((g) => g.name).sort(), removed: removed.map((g) => g.name).sort() };
    });
    if (changes.added.length || changes.removed.length) {
      this.audit({ type: 'DIRECTORY_SYNC', actorId: user.id, actorEmail: user.email, ip, details: changes });
    }
  }

  private audit(record: AuditRecord): void {
    this.events.emit(AUDIT_EVENT, record);
  }
}
