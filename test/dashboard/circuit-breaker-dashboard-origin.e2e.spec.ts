import { request } from 'node:http';
import { connect as connectH2, type ClientHttp2Session } from 'node:http2';
import { connect } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import type { CorsOptions } from '@nestjs/common/interfaces/external/cors-options.interface.js';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { CircuitBreakerModule, CircuitBreakerRegistry } from '../../lib/index.js';
import { CircuitBreakerDashboardModule } from '../../lib/dashboard/index.js';
import { HTTP_PLATFORMS, type HttpPlatform } from '../helpers/http-platforms.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { CapturingLogger } from '../helpers/nest-app.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const CROSS_SITE =
  'The circuit breaker dashboard answers its own page (same origin) and a link to the page, nothing another site sends; behind a reverse proxy that rewrites Host, add the name the browser uses to allowedHosts.';

const apps: INestApplication[] = [];
afterEach(async () => {
  while (apps.length > 0) await apps.pop()!.close();
});

/** A dashboard with controls on `platform`, with CORS or HTTP/2 as a test asks: what platformApps() cannot set. */
async function start(
  platform: HttpPlatform,
  { cors, http2 = false }: { cors?: CorsOptions | true; http2?: boolean } = {},
) {
  const logger = new CapturingLogger();
  const moduleRef = await Test.createTestingModule({
    imports: [
      CircuitBreakerModule.forRoot({ clock: new ManualClock(), breakers: { payments: {} } }),
      CircuitBreakerDashboardModule.forRoot({ control: true, guard: () => true }),
    ],
  })
    .setLogger(logger)
    .compile();
  const app =
    platform === 'fastify'
      ? moduleRef.createNestApplication(new FastifyAdapter(http2 ? { http2: true } : {}), {
          logger,
        })
      : moduleRef.createNestApplication({ logger });
  if (cors !== undefined) app.enableCors(cors === true ? undefined : cors);
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  const port = Number(new URL(await app.getUrl()).port);
  return { port, payments: app.get(CircuitBreakerRegistry).get('payments') };
}

/** One request over its own HTTP/1.1 connection, with the headers the test forges. */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      // A stream answered 200 never ends by itself: its headers are the answer.
      if (res.statusCode === 200 && path.endsWith('/stream')) {
        resolve({ status: 200, headers: res.headers, body: '' });
        req.destroy();
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
      );
    });
    req.end(body);
  });
}

/** What a server answers to bytes written as they are, up to its status line. */
function rawStatus(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer.split('\r\n')[0]!));
    socket.end(text);
  });
}

const tokenOf = (page: string) =>
  (JSON.parse(/id="cb-config">(.*?)<\/script>/.exec(page)![1]!) as { token: string }).token;

describe.each(HTTP_PLATFORMS)('the dashboard on %s with CORS enabled', (platform) => {
  it.each([
    ['enableCors()', true as const],
    ['{ origin: true, credentials: true }', { origin: true, credentials: true }],
  ])(
    'lets no other origin read the page, its token, the state or the stream (%s)',
    async (_, cors) => {
      const { port, payments } = await start(platform, { cors });
      const host = `localhost:${port}`;
      const evil = { host, origin: 'https://evil.example' };
      const fetched = { ...evil, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' };
      for (const headers of [fetched, evil])
        for (const path of ['', '/state', '/stream']) {
          const answer = await send(port, 'GET', `/circuit-breakers${path}`, headers);
          expect([path, answer.status, answer.body.includes('cb-config')]).toEqual([
            path,
            403,
            false,
          ]);
          expect((JSON.parse(answer.body) as { message: string }).message).toBe(CROSS_SITE);
          expect(answer.headers['x-content-type-options']).toBe('nosniff');
          expect(answer.headers['cross-origin-resource-policy']).toBe('same-origin');
        }
      // No Origin, as a <script src> or an <img> sends: Sec-Fetch-Site still says where it comes from.
      for (const [site, mode, path, status] of [
        ['cross-site', 'no-cors', '/state', 403],
        ['same-site', 'no-cors', '/state', 403],
        ['cross-site', 'navigate', '/state', 403],
        ['cross-site', 'navigate', '', 200],
        ['same-site', 'navigate', '', 200],
        ['none', 'navigate', '', 200],
        ['same-origin', 'cors', '/state', 200],
      ] as const) {
        const answer = await send(port, 'GET', `/circuit-breakers${path}`, {
          host,
          'sec-fetch-site': site,
          'sec-fetch-mode': mode,
        });
        expect([site, mode, path, answer.status]).toEqual([site, mode, path, status]);
        expect(answer.headers['cross-origin-resource-policy']).toBe('same-origin');
      }
      const page = await send(port, 'GET', '/circuit-breakers', { host });
      const forced = await send(
        port,
        'POST',
        '/circuit-breakers/force',
        {
          ...fetched,
          'content-type': 'application/json',
          'x-circuit-breaker-dashboard': tokenOf(page.body),
        },
        JSON.stringify({ breaker: 'payments', state: 'open' }),
      );
      expect(forced.status).toBe(403);
      expect(payments.snapshot().forced).toBeUndefined();
    },
  );
});

describe.each(HTTP_PLATFORMS)('the dashboard on %s reads the host RFC 9112 names', (platform) => {
  it('takes the authority of an absolute-form target over Host, and refuses a second Host (400)', async () => {
    const { port } = await start(platform);
    const at = (target: string, host: string) =>
      rawStatus(port, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    expect(
      await at(`http://evil.example:${port}/circuit-breakers/state`, `127.0.0.1:${port}`),
    ).toMatch(/ 403 /);
    expect(
      await at(`http://127.0.0.1:${port}/circuit-breakers/state`, `evil.example:${port}`),
    ).toMatch(/ 200 /);
    for (const hosts of [
      [`127.0.0.1:${port}`, `evil.example:${port}`],
      [`evil.example:${port}`, `127.0.0.1:${port}`],
      [`127.0.0.1:${port}`, `127.0.0.1:${port}`],
    ])
      expect(
        await rawStatus(
          port,
          `GET /circuit-breakers/state HTTP/1.1\r\n${hosts.map((host) => `Host: ${host}\r\n`).join('')}Connection: close\r\n\r\n`,
        ),
      ).toMatch(/ 400 /);
  });
});

describe('the dashboard on fastify over HTTP/2 (h2c)', () => {
  let session: ClientHttp2Session | undefined;
  afterEach(() => session?.destroy());

  function h2(headers: Record<string, string>, body?: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const stream = session!.request(headers);
      let status = 0;
      let text = '';
      stream.setEncoding('utf8');
      stream.on('error', reject);
      stream.on('response', (answer) => (status = Number(answer[':status'])));
      stream.on('data', (chunk: string) => (text += chunk));
      stream.on('end', () => resolve({ status, headers: {}, body: text }));
      stream.end(body);
    });
  }

  it("checks Host and Origin against :authority, so the page's buttons work", async () => {
    const { port, payments } = await start('fastify', { http2: true });
    session = connectH2(`http://127.0.0.1:${port}`);
    const page = await h2({ ':path': '/circuit-breakers' });
    expect(page.status).toBe(200);
    const force = (origin: string) =>
      h2(
        {
          ':method': 'POST',
          ':path': '/circuit-breakers/force',
          origin,
          'sec-fetch-site': 'same-origin',
          'content-type': 'application/json',
          'x-circuit-breaker-dashboard': tokenOf(page.body),
        },
        JSON.stringify({ breaker: 'payments', state: 'open' }),
      );
    const other = await force(`http://evil.example:${port}`);
    expect([other.status, (JSON.parse(other.body) as { message: string }).message]).toEqual([
      403,
      CROSS_SITE,
    ]);
    expect(payments.snapshot().forced).toBeUndefined();
    expect((await force(`http://127.0.0.1:${port}`)).status).toBe(204);
    expect(payments.snapshot().forced?.state).toBe('open');
    const rebound = await h2({
      ':path': '/circuit-breakers/state',
      ':authority': `evil.example:${port}`,
    });
    expect(rebound.status).toBe(403);
  });
});
