import { connect, createSecureServer, type ClientHttp2Session } from 'node:http2';
import type { Http2Session, Http2SecureServer } from 'node:http2';
import { createServer } from 'node:http';
import { connect as connectTls, type TLSSocket } from 'node:tls';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DashboardTlsSessions } from '../../lib/dashboard/dashboard-tls-sessions.js';
import { selfSignedCertificate } from '../helpers/self-signed.js';

/**
 * The dashboard finds an HTTP/2 session's TLS socket from the server's events
 * (`secureConnection`, within which Node emits `session`): each session gets
 * its own connection's socket, whatever arrives around it.
 */
let tls: { key: string; cert: string };
beforeAll(() => {
  tls = selfSignedCertificate();
});
const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!();
});

async function listening(server: Http2SecureServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => server.close());
  return (server.address() as { port: number }).port;
}

function client(port: number): ClientHttp2Session {
  const session = connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
  session.on('error', () => undefined);
  cleanups.push(() => session.destroy());
  return session;
}

describe('DashboardTlsSessions', () => {
  it('pairs each session with the TLS socket of its own connection, among HTTP/1.1 ones', async () => {
    const server = createSecureServer({ ...tls, allowHTTP1: true });
    const sessions = new DashboardTlsSessions();
    cleanups.push(sessions.watch(server));
    const accepted: TLSSocket[] = [];
    const opened: Http2Session[] = [];
    server.on('secureConnection', (socket: TLSSocket) => accepted.push(socket));
    server.on('session', (session: Http2Session) => opened.push(session));
    const port = await listening(server);
    // Four HTTP/2 clients and, between them, two HTTP/1.1 ones (no session), all at once.
    const http1 = [0, 1].map(() =>
      connectTls({
        host: '127.0.0.1',
        port,
        rejectUnauthorized: false,
        ALPNProtocols: ['http/1.1'],
      }),
    );
    for (const socket of http1) cleanups.push(() => socket.destroy());
    const clients = [0, 1, 2, 3].map(() => client(port));
    await Promise.all(clients.map((c) => new Promise((resolve) => c.once('connect', resolve))));
    await new Promise<void>((resolve) => {
      const check = () => (accepted.length === 6 ? resolve() : setTimeout(check, 10));
      check();
    });
    expect(opened).toHaveLength(4);
    // Each session's socket is the one its proxy describes: same remote port, and the one the server accepted.
    expect(
      opened.map((session) => {
        const socket = sessions.socketOf(session);
        return [accepted.includes(socket!), socket?.remotePort === session.socket.remotePort];
      }),
    ).toEqual([
      [true, true],
      [true, true],
      [true, true],
      [true, true],
    ]);
    expect(new Set(opened.map((session) => sessions.socketOf(session))).size).toBe(4);
  });

  it('watches nothing on a server without TLS, and stops watching when told', async () => {
    const sessions = new DashboardTlsSessions();
    const plain = createServer();
    const listeners = () => plain.eventNames().map((name) => [name, plain.listenerCount(name)]);
    const plainBefore = listeners();
    sessions.watch(plain);
    expect(listeners()).toEqual(plainBefore);
    const server = createSecureServer(tls);
    const before = [server.listenerCount('secureConnection'), server.listenerCount('session')];
    const stop = sessions.watch(server);
    expect([server.listenerCount('secureConnection'), server.listenerCount('session')]).toEqual([
      before[0]! + 2,
      before[1]! + 1,
    ]);
    stop();
    const port = await listening(server);
    const opened = new Promise<Http2Session>((resolve) => server.once('session', resolve));
    client(port);
    expect(sessions.socketOf(await opened)).toBeUndefined();
    expect([server.listenerCount('secureConnection'), server.listenerCount('session')]).toEqual(
      before,
    );
  });
});
