import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { request } from 'node:http';
import { connect as connectH2 } from 'node:http2';
import type { Server } from 'node:http';
import { connect, createServer, type Server as TcpServer, type Socket } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CircuitBreakerModule } from '../../lib/index.js';
import {
  CircuitBreakerDashboardModule,
  CircuitBreakerDashboardService,
} from '../../lib/dashboard/index.js';
import { HTTP_PLATFORMS, type HttpPlatform } from '../helpers/http-platforms.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { selfSignedCertificate } from '../helpers/self-signed.js';

/**
 * `app.close()` with dashboard pages open, over real sockets: a page that
 * reads on a keep-alive connection (as a browser's), and one that stopped
 * reading with events queued for it, under the drop limit.
 */
const open: INestApplication[] = [];
const clients: Socket[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  for (const app of open.splice(0)) await app.close();
});

/** How long a test lets `app.close()` run before calling it stuck: a watchdog, not a measure. */
const WATCHDOG_MS = 3_000;
/** The dashboard's grace for a page that does not read (`SHUTDOWN_GRACE_MS`). */
const GRACE_MS = 500;
/**
 * What `app.close()` may take beyond the dashboard's own wait: Nest's hooks,
 * the server's close, a loaded machine's scheduling. Measured at 5 to 30 ms
 * for a page that reads, and 5 to 55 ms past the grace for one that does
 * not, on a 2-core machine at a load average of 9 to 12, and once 328 ms past
 * the grace on a CI run. The bounds say only what tells the cases apart: a
 * page that reads closes before the grace would have run out; one that does
 * not, after the grace and well before a wait for the client (the watchdog's
 * 3 s, Express's 5 s keep-alive, or a page that never reads).
 */
const READING_MS = GRACE_MS;
const SLACK_MS = 1_000;

/** Fastify over HTTP/2: cleartext (h2c), or with TLS given this key and certificate. */
type Http2Option = false | true | { key: string; cert: string };

async function start(platform: HttpPlatform, breakers: number, http2: Http2Option = false) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      CircuitBreakerModule.forRoot({
        clock: new ManualClock(),
        breakers: Object.fromEntries(
          Array.from({ length: breakers }, (_, i) => [
            `dependency-${String(i).padStart(3, '0')}`,
            {},
          ]),
        ),
      }),
      CircuitBreakerDashboardModule.forRoot({ intervalMs: 100 }),
    ],
  }).compile();
  const app =
    platform === 'fastify'
      ? moduleRef.createNestApplication(fastifyAdapter(http2), {
          logger: false,
        })
      : moduleRef.createNestApplication({ logger: false });
  open.push(app);
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer() as Server;
  const sockets: Socket[] = [];
  server.on('connection', (socket: Socket) => sockets.push(socket));
  const port = Number(new URL(await app.getUrl()).port);
  return { app, port, sockets, service: app.get(CircuitBreakerDashboardService) };
}

function fastifyAdapter(http2: Http2Option): FastifyAdapter {
  if (http2 === false) return new FastifyAdapter();
  return new FastifyAdapter(http2 === true ? { http2: true } : { http2: true, https: http2 });
}

/** Closes the application, racing the watchdog: `'closed'` or `'still closing'`, and how long it took. */
async function close(
  app: INestApplication,
): Promise<{ result: 'closed' | 'still closing'; ms: number }> {
  open.splice(open.indexOf(app), 1);
  let timer: NodeJS.Timeout | undefined;
  const watchdog = new Promise<'still closing'>((resolve) => {
    timer = setTimeout(() => resolve('still closing'), WATCHDOG_MS);
  });
  const started = performance.now();
  const result = await Promise.race([app.close().then(() => 'closed' as const), watchdog]);
  const ms = performance.now() - started;
  clearTimeout(timer);
  return { result, ms };
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(HTTP_PLATFORMS)('app.close() with dashboard pages open, on %s', (platform) => {
  it('returns at once with a page that reads on a keep-alive connection, which receives the end of its stream', async () => {
    const { app, port, service } = await start(platform, 1);
    // As a browser's EventSource: keep-alive, reading everything.
    const page = await new Promise<{ ended: Promise<boolean>; closed: Promise<void> }>(
      (resolve, reject) => {
        const req = request({
          host: '127.0.0.1',
          port,
          path: '/circuit-breakers/stream',
          headers: {
            host: `127.0.0.1:${port}`,
            accept: 'text/event-stream',
            connection: 'keep-alive',
          },
        });
        req.on('error', reject);
        req.on('response', (res) => {
          res.resume();
          clients.push(res.socket);
          resolve({
            // true once the chunked body ended cleanly; false if the connection was cut first.
            ended: new Promise((done) => {
              res.on('end', () => done(res.complete));
              res.on('aborted', () => done(false));
            }),
            closed: new Promise((done) => res.socket.once('close', () => done())),
          });
        });
        req.end();
      },
    );
    await until(() => service.openStreams === 1);
    const closed = await close(app);
    expect(closed.result).toBe('closed');
    // No grace to wait: the end is written and read at once.
    expect(closed.ms).toBeLessThan(READING_MS);
    expect(await page.ended).toBe(true);
    await page.closed;
    expect(service.openStreams).toBe(0);
  });

  it('returns within its grace with a page that stopped reading, and closes its connection', async () => {
    const { app, port, sockets, service } = await start(platform, 400);
    // The request, then never a read: the kernel's buffers fill, then Nest's queue (1 MiB before a drop).
    const stuck = connect(port, '127.0.0.1');
    clients.push(stuck);
    stuck.pause();
    stuck.write(
      `GET /circuit-breakers/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    const gone = new Promise<void>((resolve) => stuck.once('close', () => resolve()));
    await until(() => service.openStreams === 1);
    // Backed up: events wait in the server's socket for a client that does not read.
    await until(() => sockets.some((socket) => socket.writableLength > 0), 15_000);
    const closed = await close(app);
    expect(closed.result).toBe('closed');
    // A timer never fires early (1 ms for the clocks' rounding); the rest is the slack.
    expect(closed.ms).toBeGreaterThanOrEqual(GRACE_MS - 1);
    expect(closed.ms).toBeLessThan(GRACE_MS + SLACK_MS);
    expect(service.openStreams).toBe(0);
    expect(sockets.filter((socket) => !socket.destroyed)).toEqual([]);
    // The client learns it: its connection closes, although it never read.
    stuck.resume();
    await gone;
  }, 30_000);
});

describe('app.close() with dashboard pages open over HTTP/2 (Fastify, h2c)', () => {
  it('closes their session: at once for a page that reads, within the grace for one that stopped', async () => {
    for (const reads of [true, false]) {
      const { app, port, service } = await start('fastify', 1, true);
      const session = connectH2(`http://127.0.0.1:${port}`);
      session.on('error', () => undefined);
      const sessionClosed = new Promise<void>((resolve) => session.once('close', () => resolve()));
      const stream = session.request({ ':path': '/circuit-breakers/stream' });
      stream.on('error', () => undefined);
      if (reads) stream.resume();
      else stream.pause();
      await until(() => service.openStreams === 1);
      // The page that stopped reading keeps its stream, and so its session, open: nothing it
      // does closes the connection. Let a few events (every 100 ms) wait for it.
      if (!reads) await new Promise((resolve) => setTimeout(resolve, 300));
      const closed = await close(app);
      session.destroy();
      expect([reads, closed.result]).toEqual([reads, 'closed']);
      expect(closed.ms).toBeLessThan(reads ? READING_MS : GRACE_MS + SLACK_MS);
      // Node half-closes a destroyed session's socket and waits for the page: the grace ran out,
      // then the connection was reset.
      if (!reads) expect(closed.ms).toBeGreaterThanOrEqual(GRACE_MS - 1);
      expect(service.openStreams).toBe(0);
      await sessionClosed;
    }
  }, 30_000);
});

describe('app.close() with dashboard pages open over HTTP/2 with TLS (Fastify http2 + https)', () => {
  // A self-signed certificate made for this run.
  let tls: { key: string; cert: string };
  beforeAll(() => {
    tls = selfSignedCertificate();
  });

  /**
   * A TCP relay in front of the application, as the network between it and a
   * page: `stall()` stops reading what the application sends, as a frozen
   * page or a stalled network does. A Node client cannot stop reading on its
   * own: its HTTP/2 session reads its socket natively, whatever it pauses.
   */
  async function relayTo(port: number): Promise<{ port: number; stall(): void; close(): void }> {
    const pairs: Socket[] = [];
    const relay: TcpServer = createServer((page) => {
      const app = connect(port, '127.0.0.1');
      pairs.push(page, app);
      for (const socket of [page, app]) socket.on('error', () => undefined);
      page.pipe(app);
      app.pipe(page);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    return {
      port: (relay.address() as { port: number }).port,
      stall: () => {
        const app = pairs[1]!;
        app.unpipe();
        app.pause();
      },
      close: () => {
        for (const socket of pairs) socket.destroy();
        relay.close();
      },
    };
  }

  it('closes their connection: at once for a page that reads, within the grace for one that stopped', async () => {
    for (const reads of [true, false]) {
      const { app, port, sockets, service } = await start('fastify', 400, tls);
      const relay = await relayTo(port);
      // As a browser: flow-control windows of megabytes (Chrome: 6 MB a stream, 15 MB a connection).
      const session = connectH2(`https://127.0.0.1:${relay.port}`, {
        rejectUnauthorized: false,
        settings: { initialWindowSize: 6 * 1024 * 1024 },
      });
      session.on('error', () => undefined);
      session.on('connect', () => session.setLocalWindowSize(15 * 1024 * 1024));
      const stream = session.request({
        ':path': '/circuit-breakers/stream',
        ':authority': `127.0.0.1:${port}`,
      });
      stream.on('error', () => undefined);
      stream.resume();
      // true once the stream's end arrived; false if its connection was cut first.
      const ended = new Promise<boolean>((done) => {
        stream.once('end', () => done(true));
        stream.once('close', () => done(false));
        session.once('close', () => done(false));
      });
      await until(() => service.openStreams === 1);
      // Events (every 100 ms, 400 breakers) pile up between the application and a page that stopped.
      if (!reads) {
        relay.stall();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const closed = await close(app);
      const pageEnded = reads ? await ended : false;
      session.destroy();
      relay.close();
      expect([reads, closed.result]).toEqual([reads, 'closed']);
      // A page that reads takes its end without the grace (TLS and the relay's hops: 54 to 208 ms
      // measured at a load average of 19 to 21); one that stopped gets the grace, then is cut.
      expect(closed.ms).toBeLessThan(reads ? GRACE_MS : GRACE_MS + SLACK_MS);
      if (!reads) expect(closed.ms).toBeGreaterThanOrEqual(GRACE_MS - 1);
      // The page that reads received its end; no connection of the server is left.
      expect(pageEnded).toBe(reads);
      expect(sockets.filter((socket) => !socket.destroyed)).toEqual([]);
      expect(service.openStreams).toBe(0);
    }
  }, 30_000);
});
