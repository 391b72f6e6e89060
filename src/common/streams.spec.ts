import { defaultStream, streamBase } from './streams.js';

describe('the default stream of a run', () => {
  it.each([
    ['nightly #1221', 'nightly'],
    ['nightly#1221', 'nightly'],
    ['build 57', 'build'],
    ['run-57', 'run'],
    ['e2e_57', 'e2e'],
    ['deploy 6f1c3a9e-2b7d-4c1e-9a0b-3d2f1e4c5b6a', 'deploy'],
    ['deploy 6F1C3A9E-2B7D-4C1E-9A0B-3D2F1E4C5B6A', 'deploy'],
    ['smoke 4f2a9c1', 'smoke'],
    ['smoke-4f2a9c1e5d6b7a8c9d0e1f2a3b4c5d6e7f8a9b0c', 'smoke'],
    ['nightly #1221 4f2a9c1', 'nightly'],
    ['TEST-shop.xml 2026-11-26T13:00:00.000Z', 'TEST-shop.xml'],
    ['report 2026-11-26', 'report'],
    ['1221', ''],
    ['#1221', ''],
  ])('takes the trailing build number or id off %j', (name, base) => {
    expect(streamBase(name)).toBe(base);
  });

  it.each([
    ['release v2', 'release v2'],
    ['python 3a', 'python 3a'],
    ['facade decade', 'facade decade'],
    ['smoke deadbeefcafe', 'smoke deadbeefcafe'],
    ['nightly', 'nightly'],
  ])('keeps %j, which ends in no build number or id', (name, base) => {
    expect(streamBase(name)).toBe(base);
  });

  it('adds the values of the attributes named that the run has, in the order named', () => {
    expect(
      defaultStream('nightly #1221', { env: 'staging', branch: 'main', commit: 'a1' }, ['branch', 'env']),
    ).toBe('nightly · main · staging');
    expect(defaultStream('nightly #1222', { branch: 'main' }, ['branch', 'env'])).toBe('nightly · main');
    expect(defaultStream('nightly #1223', {}, ['branch', 'env'])).toBe('nightly');
    expect(defaultStream('nightly #1224', { branch: ' ' }, ['branch'])).toBe('nightly');
  });

  it('names the runs that are only a number by a mark of their own', () => {
    expect(defaultStream('57', {}, ['branch'])).toBe('#');
    expect(defaultStream('58', { branch: 'main' }, ['branch'])).toBe('# · main');
  });

  it('keeps 200 characters of a long stream, never half of one (an emoji is two UTF-16 units)', () => {
    const stream = defaultStream(`${'a'.repeat(199)}😀b`, {}, []);
    expect([...stream]).toHaveLength(200);
    expect(stream.endsWith('a😀')).toBe(true);
    expect(defaultStream('nightly', { branch: '😀'.repeat(300) }, ['branch'])).toBe(
      `nightly · ${'😀'.repeat(190)}`,
    );
  });
});
