import request from 'supertest';
import { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, RunningApp, TestDeployment } from '../support/app.js';
import { eventually } from '../support/http.js';

describe('Client address behind a trusted proxy', () => {
  const deployment = new TestDeployment({ SVC_TRUSTED_PROXIES: '127.0.0.1', SVC_LOGIN_RATE_PER_MINUTE: '3' });
  let svc: RunningApp;

  beforeAll(async () => {
    [svc] = await deployment.start();
  });
  afterAll(() => deployment.stop());

  it('takes the address from X-Forwarded-For and limits each client separately', async () => {
    const attempt = (ip: string) =>
      request(svc.url).post('/api/auth/login').set('X-Forwarded-For', ip).send({ username: 'x@example.com', password: 'y' });
    for (let i = 0; i < 3; i++) {
      expect((await attempt('198.51.100.1')).status).toBe(401);
    }
    expect((await attempt('198.51.100.1')).status).toBe(429);
    expect((await attempt('198.51.100.2')).status).toBe(401);

    await request(svc.url)
      .post('/api/auth/login')
      .set('X-Forwarded-For', '198.51.100.7')
      .send({ username: ADMIN_EMAIL, password: ADMIN_PASSWORD })
      .expect(200);
    const success = await eventually(async () =>
      (await svc.dataSource.getRepository(AuditEventEntity).findOneBy({ type: 'LOGIN_SUCCESS' })) ?? undefined,
    );
    expect(success.ip).toBe('198.51.100.7');
  });
});
