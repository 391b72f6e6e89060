import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { generate } from 'otplib';
import request from 'supertest';
import { RunningApp, TestDeployment } from '../support/app.js';
import { login } from '../support/http.js';
import {
  type DirectoryUser,
  LDAP_BASE_DN,
  LDAP_MANAGER_DN,
  LDAP_MANAGER_PASSWORD,
  silentServer,
  Slapd,
  userDn,
} from '../support/slapd.js';

const people = `ou=people,${LDAP_BASE_DN}`;
const alice: DirectoryUser = {
  uid: 'alice',
  password: 'alice-directory-pw',
  mail: 'Alice@Example.org',
  cn: 'Alice Anders',
};
const bob: DirectoryUser = {
  uid: 'bob',
  password: 'bob-directory-pw',
  mail: 'bob@example.org',
  cn: 'Bob Berg',
};
/** A DN whose value needs escaping, in a filter and in a DN. */
const smith: DirectoryUser = {
  uid: 'jsmith',
  password: 'smith-directory-pw',
  mail: 'smith@example.org',
  cn: 'Smith, J (Ops*)',
  dn: `cn=Smith\\, J (Ops*),${people}`,
};
const carol: DirectoryUser = {
  uid: 'carol',
  password: 'carol-directory-pw',
  mail: 'carol@example.org',
  cn: 'Carol AD',
  samAccountName: 'CAROL01',
};
const mallory: DirectoryUser = {
  uid: 'mallory',
  password: 'mallory-directory-pw',
  mail: 'mallory@example.org',
  cn: 'Mallory',
};

const ldapEnv = (slapdUrl: string, extra: Record<string, string> = {}) => ({
  SVC_AUTH_LDAP_ENABLED: 'true',
  SVC_LDAP_URL: slapdUrl,
  SVC_LDAP_BASE_DN: LDAP_BASE_DN,
  SVC_LDAP_MANAGER_DN: LDAP_MANAGER_DN,
  SVC_LDAP_MANAGER_PASSWORD: LDAP_MANAGER_PASSWORD,
  SVC_LDAP_USER_SEARCH_FILTER: '(uid={0})',
  SVC_LDAP_CONNECT_TIMEOUT: '2s',
  SVC_LDAP_TIMEOUT: '2s',
  ...extra,
});

describe('Directory login (LDAP) against a private OpenLDAP', () => {
  const slapd = new Slapd();
  let deployment: TestDeployment;
  let svc: RunningApp;
  let admin: string;
  let projectId: number;
  const groupIds = new Map<string, number>();

  const as = (token: string) => ({ Authorization: `Bearer ${token}` });
  const signIn = (username: string, password: string) =>
    request(svc.url).post('/api/auth/login').send({ username, password });
  const me = async (username: string, password: string) => {
    const { body } = await signIn(username, password).expect(200);
    return (await request(svc.url).get('/api/auth/me').set(as(body.accessToken)).expect(200)).body as {
      id: number;
      email: string;
      fullName: string;
      authSource: string;
      admin: boolean;
    };
  };
  const membershipsOf = async (userId: number): Promise<string[]> =>
    (
      await svc.dataSource.query(
        `SELECT g.name || ':' || m.source AS m FROM group_members m JOIN groups g ON g.id = m.group_id WHERE m.user_id = $1 ORDER BY 1`,
        [userId],
      )
    ).map((r: { m: string }) => r.m);
  /** Changes the directory as its administrator would (ldapmodify as the root DN). */
  const ldapModify = (ldif: string) =>
    execFileSync(
      'ldapmodify',
      ['-x', '-H', slapd.url, '-D', `cn=root,${LDAP_BASE_DN}`, '-w', 'root-secret'],
      { input: ldif, stdio: ['pipe', 'ignore', 'pipe'] },
    );
  const groupDn = (cn: string) => `cn=${cn},ou=groups,${LDAP_BASE_DN}`;

  beforeAll(async () => {
    await slapd.start(
      [alice, bob, smith, carol, mallory],
      [
        { cn: 'QA-Team', members: [userDn(alice)] },
        { cn: 'qa-team', members: [userDn(bob)], ou: 'teams' },
        { cn: 'Devs', members: [userDn(alice)] },
        { cn: 'Ops', members: [userDn(smith)] },
        // Someone else's group whose filter a badly escaped DN would also match.
        { cn: 'Ops-Shadow', members: [userDn(mallory)] },
        { cn: 'Admins', members: [userDn(alice), userDn(bob)] },
      ],
    );
    deployment = new TestDeployment(ldapEnv(slapd.url));
    [svc] = await deployment.start();
    admin = (await login(svc.url)).accessToken;
    projectId = (
      await request(svc.url)
        .post('/api/projects')
        .set(as(admin))
        .send({ key: 'DIR', name: 'Directory' })
        .expect(201)
    ).body.id;
    for (const [name, role] of [
      ['QA-Team', 'REPORTER'],
      ['Ops', 'VIEWER'],
      ['Ops-Shadow', 'OWNER'],
      ['Manual', 'VIEWER'],
    ] as const) {
      const group = (
        await request(svc.url).post('/api/admin/groups').set(as(admin)).send({ name }).expect(201)
      ).body;
      await request(svc.url)
        .put(`/api/admin/groups/${group.id}/bindings`)
        .set(as(admin))
        .send([{ projectId, role }])
        .expect(200);
      groupIds.set(name, group.id);
    }
  });
  afterAll(async () => {
    await deployment?.stop();
    await slapd.destroy();
  });

  it('creates the local user at the first sign-in and reuses it later, with email and name from the entry', async () => {
    const first = await me('alice', alice.password);
    expect(first).toEqual(
      expect.objectContaining({
        email: 'alice@example.org',
        fullName: 'Alice Anders',
        authSource: 'LDAP',
        admin: false,
      }),
    );
    ldapModify(`dn: ${userDn(alice)}\nchangetype: modify\nreplace: cn\ncn: Alice Anders-Lee\n`);
    const again = await me('alice', alice.password);
    expect(again.id).toBe(first.id);
    expect(again.fullName).toBe('Alice Anders-Lee');
    // Groups by exact name: QA-Team (REPORTER on the project); Devs and Admins have no service Group and are skipped.
    expect(await membershipsOf(first.id)).toEqual(['QA-Team:DIRECTORY']);
    const { body } = await signIn('alice', alice.password).expect(200);
    const projects = (await request(svc.url).get('/api/projects').set(as(body.accessToken)).expect(200)).body;
    expect(projects.content).toEqual([expect.objectContaining({ id: projectId, role: 'REPORTER' })]);
    const groups = (await svc.dataSource.query(`SELECT name FROM groups ORDER BY name`)).map(
      (r: { name: string }) => r.name,
    );
    expect(groups).toEqual(['Manual', 'Ops', 'Ops-Shadow', 'QA-Team']);
  });

  it('syncs directory groups both ways at each sign-in, keeping manual memberships, and audits the change', async () => {
    const user = await me('alice', alice.password);
    await request(svc.url)
      .put(`/api/admin/groups/${groupIds.get('Manual')}/members/${user.id}`)
      .set(as(admin))
      .expect(204);
    ldapModify(
      `dn: ${groupDn('QA-Team')}\nchangetype: modify\ndelete: member\nmember: ${userDn(alice)}\n\ndn: ${groupDn('Ops')}\nchangetype: modify\nadd: member\nmember: ${userDn(alice)}\n`,
    );
    await me('alice', alice.password);
    expect(await membershipsOf(user.id)).toEqual(['Manual:MANUAL', 'Ops:DIRECTORY']);
    const [sync] = await svc.dataSource.query(
      `SELECT details FROM audit_events WHERE type = 'DIRECTORY_SYNC' AND actor_id = $1 ORDER BY id DESC LIMIT 1`,
      [user.id],
    );
    expect(sync.details).toEqual(expect.objectContaining({ added: ['Ops'], removed: ['QA-Team'] }));
    ldapModify(`dn: ${groupDn('QA-Team')}\nchangetype: modify\nadd: member\nmember: ${userDn(alice)}\n`);
    await me('alice', alice.password);
    expect(await membershipsOf(user.id)).toEqual(['Manual:MANUAL', 'Ops:DIRECTORY', 'QA-Team:DIRECTORY']);
  });

  it('matches group names case-sensitively: directory qa-team is not the service Group QA-Team', async () => {
    const user = await me('bob', bob.password);
    expect(await membershipsOf(user.id)).toEqual([]);
  });

  it('gives a user whose DN needs escaping exactly their own groups', async () => {
    const user = await me('jsmith', smith.password);
    expect(await membershipsOf(user.id)).toEqual(['Ops:DIRECTORY']);
  });

  it('answers a wrong password, an unknown user and filter-injection attempts with the generic 401, audited', async () => {
    const local = await signIn('admin@example.com', 'not-the-password').expect(401);
    for (const [username, password] of [
      ['alice', 'wrong'],
      ['nobody', 'whatever'],
      ['*', alice.password],
      ['*)(uid=*', alice.password],
      ['alice)(uid=*', alice.password],
      ['ali*', alice.password],
      ['\\', alice.password],
      ['alice\\2a', alice.password],
    ]) {
      const res = await signIn(username, password).expect(401);
      expect(res.body).toEqual(local.body);
    }
    // NUL never reaches the directory: the body's validation refuses it in any user name.
    await signIn('ali\u0000ce', alice.password).expect(400);
    const failures = await svc.dataSource.query(
      `SELECT count(*)::int AS n FROM audit_events WHERE type = 'LOGIN_FAILURE' AND actor_email = '*)(uid=*'`,
    );
    expect(failures[0].n).toBe(1);
  });

  it("does not set a directory user's password here: the directory owns it", async () => {
    const user = await me('bob', bob.password);
    // No reset mail goes to a directory user (forgot-password answers 202 to every address alike) ...
    await request(svc.url).post('/api/auth/forgot-password').send({ email: 'bob@example.org' }).expect(202);
    const [sent] = await svc.dataSource.query(
      `SELECT count(*)::int AS n FROM account_tokens WHERE user_id = $1`,
      [user.id],
    );
    expect(sent.n).toBe(0);
    // ... and a link it might hold from before sets nothing.
    const token = 'a-reset-token-from-before';
    await svc.dataSource.query(
      `INSERT INTO account_tokens (user_id, purpose, token_hash, expires_at) VALUES ($1, 'RESET_PASSWORD', $2, now() + interval '1 hour')`,
      [user.id, createHash('sha256').update(token).digest('hex')],
    );
    const res = await request(svc.url)
      .post('/api/auth/reset-password')
      .send({ token, password: 'a-brand-new-passphrase-1' })
      .expect(409);
    expect(res.body.message).toBe(
      'The directory owns the password of bob@example.org: change it there, then sign in with it',
    );
    await signIn('bob', bob.password).expect(200);
  });

  it("ties an account to its entry's id, not to the mail the entry carries", async () => {
    const aliceAccount = await me('alice', alice.password);
    // Mallory, able to edit her own entry, sets Alice's mail on it: she signs in as nobody, Alice stays Alice.
    await me('mallory', mallory.password);
    ldapModify(`dn: ${userDn(mallory)}\nchangetype: modify\nreplace: mail\nmail: alice@example.org\n`);
    const refused = await signIn('mallory', mallory.password).expect(401);
    expect(refused.body.message).toBe('Invalid username or password');
    expect((await me('alice', alice.password)).id).toBe(aliceAccount.id);
    // An entry whose own mail changes keeps its account, with the new address.
    ldapModify(`dn: ${userDn(alice)}\nchangetype: modify\nreplace: mail\nmail: alice.anders@example.org\n`);
    const moved = await me('alice', alice.password);
    expect([moved.id, moved.email]).toEqual([aliceAccount.id, 'alice.anders@example.org']);
    // Several mail values: which would be the account's? Refused, saying why.
    ldapModify(
      `dn: ${userDn(mallory)}\nchangetype: modify\nreplace: mail\nmail: m1@example.org\nmail: m2@example.org\n`,
    );
    const ambiguous = await signIn('mallory', mallory.password).expect(422);
    expect(ambiguous.body.message).toMatch(/has 2 mail values: it needs exactly one/);
    ldapModify(`dn: ${userDn(mallory)}\nchangetype: modify\nreplace: mail\nmail: mallory@example.org\n`);
    ldapModify(`dn: ${userDn(alice)}\nchangetype: modify\nreplace: mail\nmail: ${alice.mail}\n`);
    await signIn('mallory', mallory.password).expect(200);
  });

  it('refuses an empty password before asking the directory', async () => {
    await signIn('alice', '').expect(400);
  });

  it('keeps local accounts and the bootstrap admin working, and applies two-factor to directory users', async () => {
    await signIn('admin@example.com', 'bootstrap-admin-password-1').expect(200);
    const { body } = await signIn('jsmith', smith.password).expect(200);
    const enrolment = (
      await request(svc.url).post('/api/auth/2fa/enroll').set(as(body.accessToken)).expect(200)
    ).body;
    await request(svc.url)
      .post('/api/auth/2fa/activate')
      .set(as(body.accessToken))
      .send({ code: await generate({ secret: enrolment.secret }) })
      .expect(204);
    const second = await signIn('jsmith', smith.password).expect(200);
    expect(second.body).toEqual(
      expect.objectContaining({ twoFactorRequired: true, challengeToken: expect.any(String) }),
    );
  });

  it('answers 503 naming the directory while it is down, keeps local sign-in, and recovers without a restart', async () => {
    await slapd.stop();
    try {
      const down = await signIn('alice', alice.password).expect(503);
      expect(down.body).toEqual({
        status: 503,
        error: 'Service Unavailable',
        message: expect.stringContaining(slapd.url),
      });
      await signIn('bob', bob.password).expect(503);
      await signIn('admin@example.com', 'bootstrap-admin-password-1').expect(200);
      // Readiness does not fail for it; liveness shows it.
      await request(svc.url).get('/api/health/ready').expect(200);
      expect((await request(svc.url).get('/api/health').expect(200)).body).toEqual({
        status: 'up',
        directory: 'down',
      });
      // Not wrong passwords: no failures counted.
      const [row] = await svc.dataSource.query(
        `SELECT count(*)::int AS n FROM audit_events WHERE type = 'DIRECTORY_UNAVAILABLE'`,
      );
      expect(row.n).toBe(1);
    } finally {
      await slapd.run();
    }
    await signIn('alice', alice.password).expect(200);
    expect((await request(svc.url).get('/api/health').expect(200)).body).toEqual({
      status: 'up',
      directory: 'up',
    });
  });
});

/** A service of its own with `env`, for one test; stopped afterwards. */
async function withService(
  env: Record<string, string>,
  test: (svc: RunningApp) => Promise<void>,
): Promise<void> {
  const deployment = new TestDeployment(env);
  try {
    const [svc] = await deployment.start();
    await test(svc);
  } finally {
    await deployment.stop();
  }
}

describe('Directory login: directories that fail, and Active Directory filters', () => {
  const slapd = new Slapd();
  beforeAll(() => slapd.start([carol], [{ cn: 'QA-Team', members: [userDn(carol)] }]));
  afterAll(() => slapd.destroy());

  it('signs in by sAMAccountName with an Active Directory filter', async () => {
    await withService(
      ldapEnv(slapd.url, { SVC_LDAP_USER_SEARCH_FILTER: '(&(objectClass=adAccount)(sAMAccountName={0}))' }),
      async (svc) => {
        const { body } = await request(svc.url)
          .post('/api/auth/login')
          .send({ username: 'CAROL01', password: carol.password })
          .expect(200);
        const me = (
          await request(svc.url)
            .get('/api/auth/me')
            .set('Authorization', `Bearer ${body.accessToken}`)
            .expect(200)
        ).body;
        expect(me).toEqual(expect.objectContaining({ email: 'carol@example.org', authSource: 'LDAP' }));
        await request(svc.url)
          .post('/api/auth/login')
          .send({ username: 'carol', password: carol.password })
          .expect(401);
      },
    );
  });

  it('answers 503 within the timeout when the directory accepts connections and never answers', async () => {
    const silent = await silentServer();
    try {
      await withService(
        ldapEnv(silent.url, { SVC_LDAP_TIMEOUT: '1s', SVC_LDAP_CONNECT_TIMEOUT: '1s' }),
        async (svc) => {
          const started = Date.now();
          await request(svc.url)
            .post('/api/auth/login')
            .send({ username: 'carol', password: 'x' })
            .expect(503);
          expect(Date.now() - started).toBeLessThan(4_000);
          await request(svc.url)
            .post('/api/auth/login')
            .send({ username: 'admin@example.com', password: 'bootstrap-admin-password-1' })
            .expect(200);
        },
      );
    } finally {
      await silent.close();
    }
  });

  it('answers 503 when the directory refuses the manager account, and never counts it as a wrong password', async () => {
    await withService(
      ldapEnv(slapd.url, { SVC_LDAP_MANAGER_PASSWORD: 'not-the-manager-password' }),
      async (svc) => {
        for (let i = 0; i < 3; i++) {
          const res = await request(svc.url)
            .post('/api/auth/login')
            .send({ username: 'carol', password: carol.password })
            .expect(503);
          expect(res.body.message).toContain(slapd.url);
        }
        const [row] = await svc.dataSource.query(
          `SELECT count(*)::int AS n FROM audit_events WHERE type = 'LOGIN_FAILURE'`,
        );
        expect(row.n).toBe(0);
      },
    );
  });
});

describe('Directory login over TLS: ldaps:// and StartTLS, the certificate verified', () => {
  // slapd requires TLS for every operation: a plain ldap:// bind is refused.
  const slapd = new Slapd({ tls: true });
  beforeAll(() => slapd.start([carol], []));
  afterAll(() => slapd.destroy());

  async function signInWith(env: Record<string, string>): Promise<number> {
    let status = 0;
    await withService({ ...ldapEnv(slapd.url), ...env }, async (svc) => {
      status = (
        await request(svc.url).post('/api/auth/login').send({ username: 'carol', password: carol.password })
      ).status;
    });
    return status;
  }

  it('signs in over ldaps:// with the CA file, and refuses a certificate it cannot verify unless told not to', async () => {
    expect(await signInWith({ SVC_LDAP_URL: slapd.ldapsUrl, SVC_LDAP_CA_FILE: slapd.caFile })).toBe(200);
    expect(await signInWith({ SVC_LDAP_URL: slapd.ldapsUrl })).toBe(503);
    expect(
      await signInWith({ SVC_LDAP_URL: slapd.ldapsUrl, SVC_LDAP_TLS_REJECT_UNAUTHORIZED: 'false' }),
    ).toBe(200);
  });

  it('upgrades ldap:// with StartTLS when asked (without it the server refuses the bind)', async () => {
    expect(await signInWith({ SVC_LDAP_STARTTLS: 'true', SVC_LDAP_CA_FILE: slapd.caFile })).toBe(200);
    expect(await signInWith({})).toBe(503);
  });
});
