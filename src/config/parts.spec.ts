import { Scratch } from '../../test/support/scratch.js';
import { AppConfig } from './app-config.js';
import { describeParts } from './parts.js';

const scratch = new Scratch();
afterAll(() => scratch.cleanup());

describe(describeParts.name, () => {
  const linesOf = (env: Record<string, string>) =>
    describeParts(
      AppConfig.load({ SVC_DATA_DIR: scratch.dir('tms-parts-'), SVC_JWT_SECRET: 's'.repeat(32), ...env }),
    ).map((l) => l.text);

  it('names the live-update relay and the directory in use', () => {
    expect(linesOf({})).toEqual(
      expect.arrayContaining([
        'live-update relay: in-process (single node)',
        'directory login: off (SVC_AUTH_LDAP_ENABLED unset)',
      ]),
    );
    const lines = linesOf({
      SVC_BROKER_STOMP_HOST: 'rabbitmq',
      SVC_AUTH_LDAP_ENABLED: 'true',
      SVC_LDAP_URL: 'ldaps://dc1.corp.example:636',
      SVC_LDAP_BASE_DN: 'dc=corp,dc=example',
      SVC_LDAP_MANAGER_DN: 'cn=svc,dc=corp,dc=example',
      SVC_LDAP_MANAGER_PASSWORD: 'x',
      SVC_LDAP_USER_SEARCH_FILTER: '(sAMAccountName={0})',
    });
    expect(lines).toEqual(
      expect.arrayContaining([
        'live-update relay: STOMP at rabbitmq:61613',
        'directory login: ldaps://dc1.corp.example:636 (users: (sAMAccountName={0}) under dc=corp,dc=example)',
      ]),
    );
  });
});
