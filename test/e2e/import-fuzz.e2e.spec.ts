import { gzipSync } from 'node:zlib';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { RunningApp, TestDeployment } from '../support/app.js';
import { login, createProject } from '../support/http.js';
import { zipOf, type ZipEntry } from '../support/zip.js';
import { seeded } from '../support/seeded.js';

/**
 * Malformed uploads to POST /api/import/{format}, found answering 500 (issue #34, item 2), and a fuzz of the upload
 * path around them: truncated multipart bodies, broken headers, lying sizes. Whatever arrives, the answer is never a
 * 5xx, every refusal has the house error body, and nothing is stored.
 */

const JUNIT = (cases: string) => `<?xml version="1.0"?><testsuite name="s">${cases}</testsuite>`;
const BOUNDARY = 'fuzz-7MA4YWxkTrZu0gW';

interface Part {
  headers: string[];
  body: Buffer | string;
}

/** A multipart/form-data body written by hand, so that it can be cut and broken anywhere. */
function multipart(parts: Part[], boundary = BOUNDARY): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    pieces.push(Buffer.from(`--${boundary}\r\n${part.headers.join('\r\n')}\r\n\r\n`));
    pieces.push(Buffer.from(part.body));
    pieces.push(Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

const filePart = (name: string, body: Buffer | string, type = 'application/xml'): Part => ({
  headers: [`Content-Disposition: form-data; name="file"; filename="${name}"`, `Content-Type: ${type}`],
  body,
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  text: string;
}

/** The responses in `raw` (several when a body shorter than its Content-Length left bytes for another request). */
function responsesOf(raw: Buffer): Answer[] {
  const answers: Answer[] = [];
  let at = 0;
  while (at < raw.length) {
    const headEnd = raw.indexOf('\r\n\r\n', at);
    if (headEnd === -1) {
      throw new Error(`an incomplete response: ${raw.subarray(at).toString().slice(0, 200)}`);
    }
    const [statusLine, ...lines] = raw.subarray(at, headEnd).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const text = raw.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // left as text: the assertions name it
    }
    answers.push({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1]), headers, body, text });
    at = headEnd + 4 + length;
  }
  return answers;
}

describe('Import: malformed uploads are the client’s fault (issue #34, item 2)', () => {
  // A short request time, so that a body shorter than its Content-Length is answered (408) within the test.
  const deployment = new TestDeployment({ SVC_IMPORT_MAX_BYTES: '2mb', SVC_HTTP_REQUEST_TIMEOUT: '2s' });
  let svc: RunningApp;
  let token: string;
  let projectId: number;

  const counts = async () => {
    const [row] = await svc.dataSource.query(
      `SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM results) AS results`,
    );
    return { runs: Number(row.runs), results: Number(row.results) };
  };
  const spooled = () => {
    const spool = join(svc.config.dataDir, 'import');
    return existsSync(spool) ? readdirSync(spool) : [];
  };

  /**
   * Sends a request written byte by byte: `headers` after the request line, Host and Authorization; a
   * Content-Length of the body's size unless `headers` has one. The connection is closed by the client after
   * `closeAfterMs` (long enough for every answer the server gives) or by the server.
   */
  const exchange = (
    headers: string[],
    body: Buffer | string,
    { format = 'junit', closeAfterMs = 8_000 }: { format?: string; closeAfterMs?: number } = {},
  ): Promise<Answer[]> => {
    const { port } = new URL(svc.url);
    const bytes = Buffer.from(body);
    const lengthGiven = headers.some((h) => /^content-length:/i.test(h) || /^transfer-encoding:/i.test(h));
    const head = [
      `POST /api/import/${format}?projectId=${projectId} HTTP/1.1`,
      'Host: fuzz',
      `Authorization: Bearer ${token}`,
      ...headers,
      ...(lengthGiven ? [] : [`Content-Length: ${bytes.length}`]),
      'Connection: close',
      '',
      '',
    ].join('\r\n');
    return new Promise((resolve, reject) => {
      const received: Buffer[] = [];
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(head);
        socket.write(bytes);
      });
      const timer = setTimeout(() => socket.destroy(), closeAfterMs);
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.on('close', () => {
        clearTimeout(timer);
        try {
          resolve(responsesOf(Buffer.concat(received)));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
      // The server may close while the client is still writing a body it refused.
      socket.on('error', () => undefined);
    });
  };

  /** Never a 5xx; every refusal in the house format; nothing stored and no spooled file left. */
  const expectHarmless = async (
    answers: Answer[],
    what: string,
    before: { runs: number; results: number },
  ) => {
    expect({ what, answered: answers.length > 0 }).toEqual({ what, answered: true });
    for (const answer of answers) {
      expect({ what, status: answer.status, body: answer.body }).toEqual({
        what,
        status: expect.any(Number),
        body: expect.anything(),
      });
      expect({
        what,
        fiveHundred: answer.status >= 500,
        text: answer.status >= 500 ? answer.text : '',
      }).toEqual({
        what,
        fiveHundred: false,
        text: '',
      });
      expect({ what, status: answer.status, keys: Object.keys(answer.body as object).sort() }).toEqual({
        what,
        status: answer.status,
        keys:
          answer.status === 201 ? ['counts', 'format', 'runId', 'warnings'] : ['error', 'message', 'status'],
      });
      if (answer.status !== 201) {
        expect(answer.body).toEqual({
          status: answer.status,
          error: expect.any(String),
          message: expect.stringMatching(/\S/),
        });
      }
    }
    if (!answers.some((a) => a.status === 201)) {
      expect({ what, stored: await counts() }).toEqual({ what, stored: before });
    }
    expect({ what, spooled: spooled() }).toEqual({ what, spooled: [] });
  };

  beforeAll(async () => {
    [svc] = await deployment.start();
    token = (await login(svc.url)).accessToken;
    projectId = await createProject(svc.url, token, { key: 'FUZZ', name: 'Fuzz' });
  });
  afterAll(() => deployment.stop());

  describe('the three uploads that answered 500', () => {
    let before: { runs: number; results: number };
    beforeEach(async () => {
      before = await counts();
    });
    afterEach(async () => {
      expect(await counts()).toEqual(before);
      expect(spooled()).toEqual([]);
      await request(svc.url).get('/api/health').expect(200);
    });

    it.each([
      ['filename', 'attachment; filename="%E0%A4%A.xml"'],
      ['filename*', "attachment; filename*=UTF-8''%E0%A4%A.xml"],
    ])(
      'refuses a Content-Disposition %s with a broken percent-encoding with 400 naming it',
      async (_form, disposition) => {
        const [answer] = await exchange(
          ['Content-Type: application/xml', `Content-Disposition: ${disposition}`],
          JUNIT('<testcase name="a"/>'),
        );
        expect(answer.status).toBe(400);
        expect(answer.body).toEqual({
          status: 400,
          error: 'Bad Request',
          message: expect.stringMatching(/Content-Disposition.*percent-encoding/),
        });
      },
    );

    it('refuses a zip member that inflates past its declared size with 413 naming the member', async () => {
      const zip = zipOf([
        { name: 'reports/TEST-a.xml', data: JUNIT('<testcase name="a"/>'), deflate: true, declaredSize: 20 },
      ]);
      const [answer] = await exchange(['Content-Type: application/zip'], zip);
      expect(answer.status).toBe(413);
      expect(answer.body).toEqual({
        status: 413,
        error: 'Payload Too Large',
        message: expect.stringMatching(/reports\/TEST-a\.xml.*more than its declared size of 20 bytes/),
      });
    });

    it("refuses a multipart part whose file name's percent-encoding is not UTF-8 with 400, as a raw upload's", async () => {
      const body = multipart([
        {
          headers: [
            `Content-Disposition: form-data; name="file"; filename*=UTF-8''%FF%FE.xml`,
            'Content-Type: application/xml',
          ],
          body: JUNIT('<testcase name="a"/>'),
        },
      ]);
      const [answer] = await exchange([`Content-Type: multipart/form-data; boundary=${BOUNDARY}`], body);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        status: 400,
        error: 'Bad Request',
        message: expect.stringMatching(/file name is not valid UTF-8/),
      });
    });

    it('refuses a multipart body cut before its closing boundary with 400 saying so', async () => {
      const body = multipart([filePart('TEST-a.xml', JUNIT('<testcase name="a"/>'))]);
      const cut = body.subarray(0, body.lastIndexOf(`--${BOUNDARY}--`));
      const [answer] = await exchange([`Content-Type: multipart/form-data; boundary=${BOUNDARY}`], cut);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        status: 400,
        error: 'Bad Request',
        message: expect.stringMatching(/multipart body ends before its closing boundary/),
      });
    });
  });

  describe('fuzz (seeded): never a 5xx, always the house error body, nothing stored', () => {
    const random = seeded(34);
    const first = JUNIT(
      '<testcase name="one"/><testcase name="two"><failure message="m">trace</failure></testcase>',
    );
    const second = gzipSync(JUNIT('<testcase name="three"><skipped/></testcase>'));
    const body = multipart([
      filePart('TEST-one.xml', first),
      filePart('TEST-two.xml.gz', second, 'application/gzip'),
    ]);
    const type = `Content-Type: multipart/form-data; boundary=${BOUNDARY}`;

    // Every place a part begins or ends: each delimiter's start and end, each part's header block's end, the
    // middle of each header line and each body; then a sample of other offsets.
    const boundaries = new Set<number>([0, 1]);
    for (let at = body.indexOf(`--${BOUNDARY}`); at !== -1; at = body.indexOf(`--${BOUNDARY}`, at + 1)) {
      boundaries.add(at);
      boundaries.add(at - 2); // before the CRLF that belongs to the delimiter
      boundaries.add(at + 2 + BOUNDARY.length); // after the delimiter, before its CRLF
      boundaries.add(at + 4 + BOUNDARY.length); // after the delimiter line
    }
    for (let at = body.indexOf('\r\n\r\n'); at !== -1; at = body.indexOf('\r\n\r\n', at + 1)) {
      boundaries.add(at + 2);
      boundaries.add(at + 4);
    }
    for (let at = body.indexOf('Content-'); at !== -1; at = body.indexOf('Content-', at + 1)) {
      boundaries.add(at + 10);
    }
    const closing = body.lastIndexOf(`\r\n--${BOUNDARY}--`);
    boundaries.add(body.indexOf(first) + Math.floor(first.length / 2));
    boundaries.add(body.indexOf(second) + Math.floor(second.length / 2));
    const sample = Array.from({ length: 24 }, () => Math.floor(random() * closing));
    const cuts = [...new Set([...boundaries, ...sample])]
      .filter((n) => n >= 0 && n < body.length)
      .sort((a, b) => a - b);

    it('the whole body imports (the fuzz starts from a good upload)', async () => {
      const [answer] = await exchange([type], body);
      expect({ status: answer.status, body: answer.body }).toMatchObject({
        status: 201,
        body: { counts: { total: 3, passed: 1, failed: 1, skipped: 1 } },
      });
    });

    it(`a multipart body with two files cut at ${cuts.length} offsets (every part boundary, and a sample)`, async () => {
      for (const cut of cuts) {
        const before = await counts();
        const answers = await exchange([type], body.subarray(0, cut));
        await expectHarmless(answers, `cut at ${cut} of ${body.length}`, before);
        if (cut <= closing) {
          expect({ cut, status: answers[0].status }).toEqual({ cut, status: 400 });
        }
      }
    });

    const good = JUNIT('<testcase name="a"/>');
    const partWith = (headers: string[]) => multipart([{ headers, body: good }]);
    const headerCases: [string, string[], Buffer | string][] = [
      ['multipart without a boundary', ['Content-Type: multipart/form-data'], body],
      ['an empty boundary', ['Content-Type: multipart/form-data; boundary='], body],
      ['another boundary than the body’s', ['Content-Type: multipart/form-data; boundary=other'], body],
      [
        'a boundary of 200 characters',
        [`Content-Type: multipart/form-data; boundary=${'b'.repeat(200)}`],
        body,
      ],
      ['multipart/mixed', [`Content-Type: multipart/mixed; boundary=${BOUNDARY}`], body],
      ['a content type that is no media type', ['Content-Type: ;;;=='], good],
      ['no content type', [], good],
      ['text/plain', ['Content-Type: text/plain'], good],
      ['an unknown charset on XML', ['Content-Type: application/xml; charset=klingon'], good],
      ['a charset that lies about the bytes', ['Content-Type: application/xml; charset=utf-16'], good],
      [
        'a charset on multipart',
        [`Content-Type: multipart/form-data; boundary=${BOUNDARY}; charset=nope`],
        body,
      ],
      ['two Content-Types', ['Content-Type: application/xml', 'Content-Type: application/zip'], good],
      [
        'two different Content-Lengths',
        ['Content-Type: application/xml', 'Content-Length: 10', 'Content-Length: 12'],
        good,
      ],
      [
        'Content-Length and chunked',
        ['Content-Type: application/xml', 'Content-Length: 5', 'Transfer-Encoding: chunked'],
        good,
      ],
      [
        'chunked with a broken chunk size',
        ['Content-Type: application/xml', 'Transfer-Encoding: chunked'],
        `zz\r\n${good}\r\n0\r\n\r\n`,
      ],
      [
        'a gzip Content-Encoding that is not gzip',
        ['Content-Type: application/xml', 'Content-Encoding: gzip'],
        good,
      ],
      [
        'an unknown Content-Encoding',
        ['Content-Type: application/xml', 'Content-Encoding: br, zstd, nope'],
        good,
      ],
      [
        'a disposition that is not one',
        ['Content-Type: application/xml', 'Content-Disposition: ;;;filename'],
        good,
      ],
      [
        'a disposition with an unterminated quote',
        ['Content-Type: application/xml', 'Content-Disposition: attachment; filename="a.xml'],
        good,
      ],
      [
        'a disposition in an unknown charset',
        ['Content-Type: application/xml', "Content-Disposition: attachment; filename*=klingon''a.xml"],
        good,
      ],
      [
        'a Latin-1 disposition',
        ['Content-Type: application/xml', "Content-Disposition: attachment; filename*=iso-8859-1'de'%E4.xml"],
        good,
      ],
      [
        'a percent at the end of a name',
        ['Content-Type: application/xml', 'Content-Disposition: attachment; filename="a.xml%"'],
        good,
      ],
      [
        'an encoded NUL in a name',
        ['Content-Type: application/xml', "Content-Disposition: attachment; filename*=UTF-8''a%00.xml"],
        good,
      ],
      [
        'two dispositions',
        [
          'Content-Type: application/xml',
          'Content-Disposition: attachment; filename="a.xml"',
          'Content-Disposition: attachment; filename="%ZZ"',
        ],
        good,
      ],
      ['a part without headers', [type], multipart([{ headers: [], body: good }])],
      ['a part without a disposition', [type], partWith(['Content-Type: application/xml'])],
      [
        'a part whose disposition is not form-data',
        [type],
        partWith(['Content-Disposition: attachment; name="file"']),
      ],
      [
        'a part with a broken percent-encoded name',
        [type],
        partWith([`Content-Disposition: form-data; name="file"; filename*=UTF-8''%E0%A4%A.xml`]),
      ],
      [
        'a part with a name in an unknown charset',
        [type],
        partWith([`Content-Disposition: form-data; name="file"; filename*=klingon''%E0.xml`]),
      ],
      [
        'a part with two dispositions',
        [type],
        partWith([
          'Content-Disposition: form-data; name="file"; filename="a.xml"',
          'Content-Disposition: form-data; name="other"',
        ]),
      ],
      [
        'a part with two content types',
        [type],
        partWith([
          'Content-Disposition: form-data; name="file"; filename="a.xml"',
          'Content-Type: application/xml',
          'Content-Type: application/zip',
        ]),
      ],
      [
        'a part with a bad charset',
        [type],
        partWith([
          'Content-Disposition: form-data; name="file"; filename="a.xml"',
          'Content-Type: text/xml; charset=klingon',
        ]),
      ],
      [
        'a part header of 100 KB',
        [type],
        partWith([`Content-Disposition: form-data; name="file"; filename="${'a'.repeat(100_000)}.xml"`]),
      ],
      [
        'a header line without a colon',
        [type],
        partWith(['Content-Disposition: form-data; name="file"; filename="a.xml"', 'garbage']),
      ],
      ['only a closing delimiter', [type], `--${BOUNDARY}--\r\n`],
      [
        'no part named file',
        [type],
        multipart([{ headers: ['Content-Disposition: form-data; name="note"'], body: 'x' }]),
      ],
    ];

    it.each(headerCases)('broken headers: %s', async (what, headers, payload) => {
      const before = await counts();
      await expectHarmless(await exchange(headers, payload), what, before);
    });

    const report = JUNIT('<testcase name="a"/><testcase name="b"/>'.repeat(50));
    const lyingZips: [string, ZipEntry[]][] = [
      [
        'an uncompressed size smaller than the data (deflated)',
        [{ name: 'TEST-a.xml', data: report, deflate: true, declaredSize: 100 }],
      ],
      [
        'an uncompressed size larger than the data (deflated)',
        [{ name: 'TEST-a.xml', data: report, deflate: true, declaredSize: report.length + 100 }],
      ],
      [
        'an uncompressed size of 0 (deflated)',
        [{ name: 'TEST-a.xml', data: report, deflate: true, declaredSize: 0 }],
      ],
      [
        'an uncompressed size smaller than the data (stored)',
        [{ name: 'TEST-a.xml', data: report, declaredSize: 100 }],
      ],
      [
        'an uncompressed size larger than the data (stored)',
        [{ name: 'TEST-a.xml', data: report, declaredSize: report.length + 100 }],
      ],
      [
        'a compressed size smaller than the data',
        [{ name: 'TEST-a.xml', data: report, deflate: true, declaredCompressedSize: 10 }],
      ],
      [
        'a compressed size larger than the data',
        [{ name: 'TEST-a.xml', data: report, deflate: true, declaredCompressedSize: 100_000 }],
      ],
      [
        'a compressed size of 0',
        [{ name: 'TEST-a.xml', data: report, deflate: true, declaredCompressedSize: 0 }],
      ],
      [
        'a stored member whose sizes disagree',
        [{ name: 'TEST-a.xml', data: report, declaredCompressedSize: 50 }],
      ],
      [
        'a good member and then a lying one',
        [
          { name: 'TEST-a.xml', data: report, deflate: true },
          { name: 'TEST-b.xml', data: report, deflate: true, declaredSize: 30 },
        ],
      ],
    ];

    it.each(lyingZips)('lying sizes: a zip member with %s', async (what, entries) => {
      const before = await counts();
      const answers = await exchange(['Content-Type: application/zip'], zipOf(entries));
      await expectHarmless(answers, what, before);
      expect({ what, status: answers[0].status }).toEqual({ what, status: expect.any(Number) });
      expect(answers[0].status).toBeGreaterThanOrEqual(400);
    });

    it('lying sizes: a zip cut short, and with bytes flipped (seeded)', async () => {
      const zip = zipOf([
        { name: 'TEST-a.xml', data: report, deflate: true },
        { name: 'TEST-b.xml', data: report },
      ]);
      const variants: [string, Buffer][] = [];
      for (const cut of [4, 30, Math.floor(zip.length / 2), zip.length - 22, zip.length - 1]) {
        variants.push([`zip cut at ${cut}`, zip.subarray(0, cut)]);
      }
      for (let i = 0; i < 8; i++) {
        const broken = Buffer.from(zip);
        const at = 4 + Math.floor(random() * (zip.length - 4));
        broken[at] ^= 1 + Math.floor(random() * 255);
        variants.push([`zip with byte ${at} flipped`, broken]);
      }
      for (const [what, bytes] of variants) {
        const before = await counts();
        await expectHarmless(await exchange(['Content-Type: application/zip'], bytes), what, before);
      }
    });

    it('lying sizes: a gzip truncated at every 10th byte, and corrupted (seeded)', async () => {
      const gz = gzipSync(report);
      const variants: [string, Buffer][] = [];
      for (let cut = 2; cut < gz.length; cut += Math.max(1, Math.floor(gz.length / 10))) {
        variants.push([`gzip cut at ${cut} of ${gz.length}`, gz.subarray(0, cut)]);
      }
      variants.push(['gzip without its trailer', gz.subarray(0, gz.length - 8)]);
      const badCrc = Buffer.from(gz);
      badCrc[gz.length - 8] ^= 0xff;
      variants.push(['gzip with a wrong CRC', badCrc]);
      const badSize = Buffer.from(gz);
      badSize[gz.length - 4] ^= 0xff;
      variants.push(['gzip with a wrong size in its trailer', badSize]);
      const badMethod = Buffer.from(gz);
      badMethod[2] = 7;
      variants.push(['gzip with an unknown method', badMethod]);
      variants.push(['gzip followed by garbage', Buffer.concat([gz, Buffer.from('garbage')])]);
      for (let i = 0; i < 6; i++) {
        const broken = Buffer.from(gz);
        const at = 10 + Math.floor(random() * (gz.length - 10));
        broken[at] ^= 1 + Math.floor(random() * 255);
        variants.push([`gzip with byte ${at} flipped`, broken]);
      }
      for (const [what, bytes] of variants) {
        const before = await counts();
        const answers = await exchange(['Content-Type: application/gzip'], bytes);
        await expectHarmless(answers, what, before);
      }
    });

    it('lying sizes: a Content-Length larger than the body is answered 408 when it does not come', async () => {
      const before = await counts();
      const answers = await exchange(['Content-Type: application/xml', 'Content-Length: 5000'], good);
      await expectHarmless(answers, 'Content-Length larger', before);
      expect(answers.map((a) => a.status)).toEqual([408]);
    });

    it('lying sizes: a Content-Length smaller than the body', async () => {
      for (const length of [0, 10, good.length - 1]) {
        const before = await counts();
        const answers = await exchange(['Content-Type: application/xml', `Content-Length: ${length}`], good);
        await expectHarmless(answers, `Content-Length ${length} of ${good.length}`, before);
        expect(answers[0].status).toBeGreaterThanOrEqual(400);
      }
    });

    it('lying sizes: a multipart body larger than its Content-Length, or with a gzip part that lies', async () => {
      const truncatedGzip = multipart([
        filePart('TEST-one.xml', first),
        filePart('TEST-two.xml.gz', second.subarray(0, second.length - 6), 'application/gzip'),
      ]);
      for (const [what, headers, payload] of [
        [
          'a multipart Content-Length cut inside the second part',
          [type, `Content-Length: ${body.length - 40}`],
          body,
        ],
        ['a multipart body with a truncated gzip part', [type], truncatedGzip],
      ] as const) {
        const before = await counts();
        const answers = await exchange([...headers], payload);
        await expectHarmless(answers, what, before);
        expect(answers[0].status).toBeGreaterThanOrEqual(400);
      }
    });

    afterAll(async () => {
      await request(svc.url).get('/api/health').expect(200);
    });
  });
});
