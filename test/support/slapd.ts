import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './process.js';

export const LDAP_BASE_DN = 'dc=example,dc=org';
export const LDAP_MANAGER_DN = `cn=reader,${LDAP_BASE_DN}`;
export const LDAP_MANAGER_PASSWORD = 'reader-secret';

/** An attribute of Active Directory's, so a test can search by it as AD deployments do. */
const AD_SCHEMA = `
attributetype ( 1.2.840.113556.1.4.221 NAME 'sAMAccountName'
  EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch
  SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
objectclass ( 1.2.840.113556.1.5.9.1 NAME 'adAccount' SUP top AUXILIARY MAY sAMAccountName )
`;

export interface DirectoryUser {
  uid: string;
  password: string;
  mail: string;
  cn: string;
  /** The entry's RDN value when it is not `uid=<uid>` (e.g. a cn that needs escaping). */
  dn?: string;
  samAccountName?: string;
}

export interface DirectoryGroup {
  cn: string;
  members: string[];
  /** The organizational unit it is in: groups (default) or teams (a cn differing only in case needs another). */
  ou?: 'groups' | 'teams';
}

/** An LDIF value: base64 (`::`) when it is not safe as it is. */
function ldifLine(name: string, value: string): string {
  return /^[\x20-\x7e]*$/.test(value) && !/^[ :<]/.test(value) && !value.endsWith(' ')
    ? `${name}: ${value}`
    : `${name}:: ${Buffer.from(value).toString('base64')}`;
}

export function userDn(user: DirectoryUser): string {
  return user.dn ?? `uid=${user.uid},ou=people,${LDAP_BASE_DN}`;
}

/**
 * A private OpenLDAP server (Debian's slapd) for one test file: a temporary directory with its configuration and
 * database, on a free high port, unprivileged (as the openldap user when the tests run as root). Users under
 * ou=people, groups (groupOfNames) under ou=groups and ou=teams, and a read-only manager entry.
 */
export class Slapd {
  readonly dir = mkdtempSync(join(tmpdir(), 'tms-slapd-'));
  port = 0;
  /** With `tls`: the ldaps:// port. */
  tlsPort = 0;
  private child?: ChildProcess;

  /**
   * `tls`: a CA and a certificate for 127.0.0.1 and localhost signed by it (openssl), an ldaps:// listener beside
   * ldap://, and TLS required for every operation (`security tls=1`): a plain ldap:// bind is refused unless the
   * client upgraded the connection with StartTLS.
   */
  constructor(private readonly options: { tls?: boolean } = {}) {}

  get url(): string {
    return `ldap://127.0.0.1:${this.port}`;
  }

  get ldapsUrl(): string {
    return `ldaps://127.0.0.1:${this.tlsPort}`;
  }

  /** The PEM file of the CA that signed the server's certificate (with `tls`). */
  get caFile(): string {
    return join(this.dir, 'ca.pem');
  }

  static available(): boolean {
    return existsSync('/usr/sbin/slapd');
  }

  async start(users: DirectoryUser[], groups: DirectoryGroup[]): Promise<void> {
    if (!Slapd.available()) {
      throw new Error('slapd is not installed: apt-get install slapd ldap-utils (npm test and .ci/run do)');
    }
    this.port = await freePort();
    mkdirSync(join(this.dir, 'data'));
    const tls: string[] = [];
    if (this.options.tls) {
      this.tlsPort = await freePort();
      this.makeCertificates();
      tls.push(
        `TLSCACertificateFile ${this.caFile}`,
        `TLSCertificateFile ${join(this.dir, 'server.pem')}`,
        `TLSCertificateKeyFile ${join(this.dir, 'server.key')}`,
        'security tls=1',
      );
    }
    writeFileSync(join(this.dir, 'ad.schema'), AD_SCHEMA);
    writeFileSync(
      join(this.dir, 'slapd.conf'),
      [
        'include /etc/ldap/schema/core.schema',
        'include /etc/ldap/schema/cosine.schema',
        'include /etc/ldap/schema/inetorgperson.schema',
        'include /etc/ldap/schema/nis.schema',
        `include ${join(this.dir, 'ad.schema')}`,
        `pidfile ${join(this.dir, 'slapd.pid')}`,
        ...tls,
        'modulepath /usr/lib/ldap',
        'moduleload back_mdb',
        'database mdb',
        'maxsize 16777216',
        `suffix "${LDAP_BASE_DN}"`,
        `rootdn "cn=root,${LDAP_BASE_DN}"`,
        'rootpw root-secret',
        `directory ${join(this.dir, 'data')}`,
        'access to attrs=userPassword by anonymous auth by * none',
        'access to * by * read',
        '',
      ].join('\n'),
    );
    const entries = [
      [
        `dn: ${LDAP_BASE_DN}`,
        'objectClass: dcObject',
        'objectClass: organization',
        'dc: example',
        'o: Example',
      ],
      [`dn: ou=people,${LDAP_BASE_DN}`, 'objectClass: organizationalUnit', 'ou: people'],
      [`dn: ou=groups,${LDAP_BASE_DN}`, 'objectClass: organizationalUnit', 'ou: groups'],
      [`dn: ou=teams,${LDAP_BASE_DN}`, 'objectClass: organizationalUnit', 'ou: teams'],
      [
        `dn: ${LDAP_MANAGER_DN}`,
        'objectClass: simpleSecurityObject',
        'objectClass: organizationalRole',
        'cn: reader',
        `userPassword: ${LDAP_MANAGER_PASSWORD}`,
      ],
      ...users.map((u) => [
        ldifLine('dn', userDn(u)),
        'objectClass: inetOrgPerson',
        ...(u.samAccountName ? ['objectClass: adAccount', ldifLine('sAMAccountName', u.samAccountName)] : []),
        ldifLine('uid', u.uid),
        ldifLine('cn', u.cn),
        ldifLine('sn', u.cn.split(' ').pop() ?? u.cn),
        ldifLine('mail', u.mail),
        ldifLine('userPassword', u.password),
      ]),
      ...groups.map((g) => [
        ldifLine('dn', `cn=${g.cn},ou=${g.ou ?? 'groups'},${LDAP_BASE_DN}`),
        'objectClass: groupOfNames',
        ldifLine('cn', g.cn),
        // groupOfNames needs a member: the manager entry, which no sign-in is, keeps an emptied group valid.
        ldifLine('member', LDAP_MANAGER_DN),
        ...g.members.map((m) => ldifLine('member', m)),
      ]),
    ];
    writeFileSync(join(this.dir, 'seed.ldif'), entries.map((e) => e.join('\n')).join('\n\n') + '\n');
    execFileSync(
      '/usr/sbin/slapadd',
      ['-q', '-f', join(this.dir, 'slapd.conf'), '-l', join(this.dir, 'seed.ldif')],
      { stdio: 'pipe' },
    );
    await this.run();
  }

  /** Starts slapd on its data (again, after stop). */
  async run(): Promise<void> {
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      chmodSync(this.dir, 0o755);
      execFileSync('chown', ['-R', 'openldap:openldap', this.dir]);
    }
    // -d 0: in the foreground (a child of the tests, killed with them), logging nothing.
    this.child = spawn(
      '/usr/sbin/slapd',
      [
        '-d',
        '0',
        '-f',
        join(this.dir, 'slapd.conf'),
        '-h',
        this.options.tls ? `${this.url}/ ${this.ldapsUrl}/` : this.url,
        ...(asRoot ? ['-u', 'openldap', '-g', 'openldap'] : []),
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i++) {
      if (await answers(this.port)) {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`slapd did not start on ${this.url}`);
  }

  private makeCertificates(): void {
    const file = (name: string) => join(this.dir, name);
    const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      file('ca.key'),
      '-out',
      file('ca.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=tms-test-ca',
    );
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      file('server.key'),
      '-out',
      file('server.csr'),
      '-subj',
      '/CN=127.0.0.1',
    );
    writeFileSync(file('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    openssl(
      'x509',
      '-req',
      '-in',
      file('server.csr'),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file('server.pem'),
      '-days',
      '2',
      '-extfile',
      file('ext.cnf'),
    );
  }

  /** Stops slapd, keeping its data (run() starts it again). */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }

  async destroy(): Promise<void> {
    await this.stop();
    if (process.getuid?.() === 0) {
      chownSync(this.dir, 0, 0);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** A server that accepts TCP connections and never answers: a directory hung mid-way. */
export async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `ldap://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        sockets.forEach((s) => s.destroy());
        server.close(() => resolve());
      }),
  };
}
