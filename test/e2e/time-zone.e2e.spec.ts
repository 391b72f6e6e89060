import request from 'supertest';
import { TestDeployment } from '../support/app.js';
import { login } from '../support/http.js';

/**
 * The service in a process whose TZ is not UTC (Jest cannot change its own time zone): node-postgres wrote Date
 * parameters in local time with the offset rounded to the minute, so before 1883 in Los Angeles (local mean
 * time, UTC-07:52:58) a timestamp was stored 58 seconds off.
 */
describe('Timestamps in a service outside UTC', () => {
  const deployment = new TestDeployment({ TZ: 'America/Los_Angeles' });
  let url: string;
  let token: string;

  beforeAll(async () => {
    await deployment.start(0);
    ({ url } = await deployment.startProcessReplica());
    token = (await login(url)).accessToken;
  });
  afterAll(() => deployment.stop());

  it('stores and answers every timestamp exactly as sent', async () => {
    const post = (path: string, body: object) => request(url).post(path).set('Authorization', `Bearer ${token}`).send(body);
    const projectId = (await post('/api/projects', { key: 'TZ', name: 'time zones' }).expect(201)).body.id;
    const run = await post(`/api/projects/${projectId}/runs`, { name: 'old times', startedAt: '1800-01-01T00:00:00Z' }).expect(201);
    expect(run.body.startedAt).toBe('1800-01-01T00:00:00.000Z');
    const finished = await post(`/api/runs/${run.body.id}/finish`, { finishedAt: '1800-01-01T00:00:30.250Z' }).expect(200);
    expect(finished.body).toEqual(expect.objectContaining({ startedAt: '1800-01-01T00:00:00.000Z', finishedAt: '1800-01-01T00:00:30.250Z' }));
    const read = await request(url).get(`/api/runs/${run.body.id}`).set('Authorization', `Bearer ${token}`).expect(200);
    expect(read.body.finishedAt).toBe('1800-01-01T00:00:30.250Z');
  });
});
