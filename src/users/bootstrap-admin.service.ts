import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { PasswordHasher } from './password-hasher.js';
import { UsersRepository } from './users.repository.js';

/**
 * Creates or updates the bootstrap administrator from SVC_BOOTSTRAP_ADMIN_*, at every boot. It stays a local
 * account, so it keeps working when directory login is enabled and the directory is down.
 */
@Injectable()
export class BootstrapAdminService implements OnApplicationBootstrap {
  private readonly logger = new Logger('BootstrapAdmin');

  constructor(
    private readonly config: AppConfig,
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const admin = this.config.bootstrapAdmin;
    if (!admin) {
      return;
    }
    const existing = await this.users.findByEmail(admin.email);
    const passwordMatches = existing?.passwordHash
      ? await this.hasher.verify(existing.passwordHash, admin.password)
      : false;
    if (existing && passwordMatches && existing.admin && existing.enabled && existing.authSource === 'LOCAL') {
      return;
    }
    const passwordHash = passwordMatches ? existing!.passwordHash : await this.hasher.hash(admin.password);
    if (existing) {
      await this.users.update(existing.id, {
        passwordHash,
        admin: true,
        enabled: true,
        authSource: 'LOCAL',
      });
      this.logger.log(`Updated the bootstrap administrator ${admin.email}`);
    } else {
      await this.users
        .save({
          email: admin.email,
          fullName: 'Administrator',
          passwordHash,
          admin: true,
          enabled: true,
          authSource: 'LOCAL',
          emailVerified: true,
        })
        .catch(async (error: unknown) => {
          // Another replica created it at the same moment.
          if (!(await this.users.findByEmail(admin.email))) {
            throw error;
          }
        });
      this.logger.log(`Created the bootstrap administrator ${admin.email}`);
    }
  }
}
