import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { UsersModule } from '../users/users.module.js';
import { DirectoryLogin } from './directory-login.service.js';
import { LdapDirectory } from './ldap-directory.js';
import { LdapStrategy } from './ldap.strategy.js';

/** Directory login (DESIGN.md, `ldap/`): the directory only when SVC_AUTH_LDAP_ENABLED=true. */
@Module({
  imports: [UsersModule],
  providers: [
    {
      provide: LdapDirectory,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => (config.ldap ? new LdapDirectory(config) : null),
    },
    DirectoryLogin,
    LdapStrategy,
  ],
  exports: [DirectoryLogin, LdapDirectory],
})
export class LdapModule {}
