import { Injectable } from '@nestjs/common';
import { UserCache } from '../users/user-cache.js';
import { UsersRepository } from '../users/users.repository.js';
import { RefreshTokenService } from './refresh-token.service.js';

/** Ending every sign-in session of a user at once (a password reset, a disabled account). */
@Injectable()
export class SessionsService {
  constructor(
    private readonly refreshTokens: RefreshTokenService,
    private readonly users: UsersRepository,
    private readonly userCache: UserCache,
  ) {}

  /**
   * Every refresh-token family of the user, then every access JWT issued until now (the user's tokensValidAfter,
   * which the guard compares with a token's issue time in milliseconds); resolves once every replica has forgotten
   * the user's cached row, so that none accepts those tokens any more, and their sockets are being closed (LiveSockets
   * re-checks a user's sockets on the same broadcast). Refresh families first: a refresh between the two would
   * otherwise issue a token after the cut-off from a family about to be revoked.
   */
  async endAll(userId: string): Promise<void> {
    await this.refreshTokens.revokeAllForUser(userId);
    await this.users.update(userId, { tokensValidAfter: new Date() });
    await this.userCache.invalidate(userId);
  }
}
