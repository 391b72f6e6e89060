import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Injectable, Logger } from '@nestjs/common';
import { Client, InvalidCredentialsError, type Entry } from 'ldapts';
import { AppConfig, type LdapSettings } from '../config/app-config.js';

/** What a successful directory sign-in tells about the user. */
export interface DirectoryEntry {
  dn: string;
  /** The entry's immutable id: entryUUID (OpenLDAP), objectGUID (Active Directory, hex), else `dn:<DN>`. */
  id: string;
  email: string;
  fullName: string;
  /** The names (cn) of the directory groups the user is a member of. */
  groups: string[];
}

/** The directory could not be asked: down, not answering within the timeouts, or refusing the manager. */
export class DirectoryUnavailableError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'DirectoryUnavailableError';
  }
}

/** RFC 4515 escaping of a value put into a filter: `*`, `(`, `)`, `\` and NUL can never widen a search. */
export function escapeFilterValue(value: string): string {
  return value.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** A filter template's `{0}` replaced by `value`, escaped. */
export function fillFilter(template: string, value: string): string {
  return template.split('{0}').join(escapeFilterValue(value));
}

/** A directory entry the service cannot use as it is (several mail values): 422, not an outage. */
export class AmbiguousEntryError extends Error {}

const values = (entry: Entry, name: string): string[] => {
  const value = entry[name];
  const all = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return all.map((v) => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v)));
};

const first = (entry: Entry, name: string): string | undefined => values(entry, name)[0];

/**
 * Directory sign-in with ldapts (ldapjs, under passport-ldapauth, is unmaintained): bind as the read-only manager,
 * search the user (exactly one entry), bind as that entry with the password, then read the user's groups as the
 * manager. A connection per sign-in, closed afterwards, with connect and operation timeouts; every failure of the
 * directory itself is a DirectoryUnavailableError, never a wrong password.
 */
@Injectable()
export class LdapDirectory {
  private readonly log = new Logger('Directory');
  private readonly settings: LdapSettings;
  private readonly tls: ConnectionOptions;
  /** Whether the last attempt reached the directory: an outage is logged once, when it begins and ends. */
  private up: boolean | undefined;
  private lookedAt = 0;
  private probing = false;

  constructor(config: AppConfig) {
    this.settings = config.ldap!;
    this.tls = {
      rejectUnauthorized: this.settings.rejectUnauthorized,
      ...(this.settings.caFile ? { ca: readFileSync(this.settings.caFile) } : {}),
    };
  }

  get url(): string {
    return this.settings.url;
  }

  /** 'up' or 'down' as the last attempt found it; 'unknown' before the first. */
  get state(): 'up' | 'down' | 'unknown' {
    return this.up === undefined ? 'unknown' : this.up ? 'up' : 'down';
  }

  /**
   * The user's entry when `password` is theirs; null when the user is unknown, not unique or the password wrong.
   * Throws DirectoryUnavailableError when the directory cannot be asked.
   */
  async authenticate(username: string, password: string): Promise<DirectoryEntry | null> {
    if (!username || !password) {
      return null;
    }
    const client = this.client();
    try {
      const entry = await this.signIn(client, username, password);
      this.reached();
      return entry;
    } catch (error) {
      if (error instanceof AmbiguousEntryError) {
        this.reached();
        throw error;
      }
      if (error instanceof DirectoryUnavailableError) {
        this.unreachable(error.reason);
        throw error;
      }
      const reason = (error as Error).message || String(error);
      this.unreachable(reason);
      throw new DirectoryUnavailableError(reason);
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }

  /** The state as last found, probing again in the background when the last look is over 30 s old. */
  recentState(): 'up' | 'down' | 'unknown' {
    if (Date.now() - this.lookedAt > 30_000 && !this.probing) {
      this.probing = true;
      void this.probe().finally(() => (this.probing = false));
    }
    return this.state;
  }

  /** Asks the directory whether it answers (a manager bind). */
  async probe(): Promise<'up' | 'down'> {
    const client = this.client();
    try {
      await this.bindManager(client);
      this.reached();
      return 'up';
    } catch (error) {
      this.unreachable((error as Error).message);
      return 'down';
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }

  /** A client for one sign-in. (ldapts connects with TLS whenever it is given TLS options: only for ldaps://.) */
  private client(): Client {
    return new Client({
      url: this.settings.url,
      connectTimeout: this.settings.connectTimeoutMs,
      timeout: this.settings.timeoutMs,
      ...(this.settings.url.toLowerCase().startsWith('ldaps:') ? { tlsOptions: this.tls } : {}),
    });
  }

  private async signIn(client: Client, username: string, password: string): Promise<DirectoryEntry | null> {
    await this.bindManager(client);
    const { searchEntries } = await client.search(this.settings.userSearchBase, {
      scope: 'sub',
      filter: fillFilter(this.settings.userSearchFilter, username),
      attributes: ['mail', 'cn', 'displayName', 'entryUUID', 'objectGUID'],
      explicitBufferAttributes: ['objectGUID'],
      sizeLimit: 2,
    });
    if (searchEntries.length !== 1) {
      return null;
    }
    const [user] = searchEntries;
    try {
      await client.bind(user.dn, password);
    } catch (error) {
      if (error instanceof InvalidCredentialsError) {
        return null;
      }
      throw error;
    }
    await this.bindManager(client);
    const { searchEntries: groups } = await client.search(this.settings.groupSearchBase, {
      scope: 'sub',
      filter: fillFilter(this.settings.groupSearchFilter, user.dn),
      attributes: ['cn'],
    });
    const mails = values(user, 'mail');
    if (mails.length > 1) {
      // Which of them would be the account's? Refuse rather than pick one that may change order.
      throw new AmbiguousEntryError(
        `The directory entry ${user.dn} has ${mails.length} mail values: it needs exactly one`,
      );
    }
    const email = mails[0];
    const guid = user.objectGUID;
    return {
      dn: user.dn,
      id:
        first(user, 'entryUUID') ??
        (Buffer.isBuffer(guid)
          ? `guid:${guid.toString('hex')}`
          : Array.isArray(guid) && Buffer.isBuffer(guid[0])
            ? `guid:${guid[0].toString('hex')}`
            : `dn:${user.dn.toLowerCase()}`),
      email: (email ?? '').trim().toLowerCase(),
      fullName: first(user, 'displayName') ?? first(user, 'cn') ?? username,
      groups: groups.map((g) => first(g, 'cn')).filter((cn): cn is string => cn !== undefined),
    };
  }

  private async bindManager(client: Client): Promise<void> {
    if (this.settings.startTls && !client.isConnected) {
      await client.startTLS(this.tls);
    }
    try {
      await client.bind(this.settings.managerDn, this.settings.managerPassword);
    } catch (error) {
      if (error instanceof InvalidCredentialsError) {
        throw new DirectoryUnavailableError(
          'the directory refused the manager account (SVC_LDAP_MANAGER_DN, SVC_LDAP_MANAGER_PASSWORD)',
        );
      }
      throw error;
    }
  }

  private reached(): void {
    this.lookedAt = Date.now();
    if (this.up === false) {
      this.log.log(`The directory at ${this.settings.url} answers again`);
    }
    this.up = true;
  }

  private unreachable(reason: string): void {
    this.lookedAt = Date.now();
    if (this.up !== false) {
      this.log.warn(`The directory at ${this.settings.url} is unavailable: ${reason}`);
    }
    this.up = false;
  }
}
