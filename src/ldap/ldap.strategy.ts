import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import passport from 'passport';
import { Strategy } from 'passport-custom';
import type { UserEntity } from '../users/user.entity.js';
import { DirectoryLogin, type DirectoryRefusal } from './directory-login.service.js';

/** What the login hands the strategy: the credentials, and where it says why it refused. */
export interface DirectorySignIn {
  body: { username: string; password: string };
  ip: string;
  refusal?: DirectoryRefusal;
}

/**
 * The Passport strategy of directory sign-in (`ldap`), on ldapts through DirectoryLogin: the user, or false with
 * the reason left on the request; errors (the directory unavailable: 503) pass through.
 */
@Injectable()
export class LdapStrategy extends PassportStrategy(Strategy, 'ldap') {
  constructor(private readonly directory: DirectoryLogin) {
    super();
  }

  async validate(req: DirectorySignIn): Promise<UserEntity | false> {
    const outcome = await this.directory.signIn(req.body.username, req.body.password, req.ip);
    if (typeof outcome === 'string') {
      req.refusal = outcome;
      return false;
    }
    return outcome;
  }
}

/** Runs the `ldap` strategy through Passport for a login: the user, or why not. */
export function signInThroughDirectory(
  username: string,
  password: string,
  ip: string,
): Promise<UserEntity | DirectoryRefusal> {
  const req: DirectorySignIn = { body: { username, password }, ip };
  return new Promise((resolve, reject) => {
    const authenticate = passport.authenticate(
      'ldap',
      { session: false },
      (error: unknown, user: UserEntity | false) => {
        if (error) {
          reject(
            error instanceof Error ? error : new Error(`The ldap strategy failed: ${JSON.stringify(error)}`),
          );
        } else {
          resolve(user || (req.refusal ?? 'unknown user or wrong password'));
        }
      },
    ) as (req: unknown, res: unknown, next: (error?: unknown) => void) => void;
    authenticate(req, {}, reject);
  });
}
