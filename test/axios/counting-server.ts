import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the server answers to one request; `undefined`: it never answers (a hung upstream). */
export type Answer = { status: number; headers?: Record<string, string> } | undefined;

/**
 * An HTTP upstream on 127.0.0.1 that counts what reaches it: connections
 * opened, requests received, and sockets that closed while a request was
 * still unanswered (a client that gave up).
 */
export interface CountingServer {
  readonly url: string;
  readonly connections: number;
  readonly requests: number;
  /** Paths of the requests received, in order. */
  readonly paths: string[];
  /** Sockets closed by the client while their request was unanswered. */
  readonly abandoned: number;
  /** Resolves when the server has received `count` requests in all. */
  received(count: number): Promise<void>;
  /** Resolves when `count` sockets in all have closed while their request was unanswered. */
  abandonedBy(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function countingServer(answer: (path: string) => Answer): Promise<CountingServer> {
  const paths: string[] = [];
  let connections = 0;
  let abandoned = 0;
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const waiter of waiters) waiter();
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    paths.push(request.url ?? '');
    wake();
    const reply = answer(request.url ?? '');
    if (reply === undefined) {
      response.on('close', () => {
        if (!response.writableEnded) abandoned++;
        wake();
      });
      return;
    }
    response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    response.end(JSON.stringify({ status: reply.status }));
  });
  server.on('connection', (_socket: Socket) => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const until = (done: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      if (done()) return resolve();
      const waiter = (): void => {
        if (!done()) return;
        waiters.delete(waiter);
        resolve();
      };
      waiters.add(waiter);
    });
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    get requests() {
      return paths.length;
    },
    paths,
    get abandoned() {
      return abandoned;
    },
    received: (count) => until(() => paths.length >= count),
    abandonedBy: (count) => until(() => abandoned >= count),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The upstream most tests use: `/ok` 200, `/fail` 500, `/hang` never answers, `/status/<n>?<header>=<value>`, under `/api` too. */
export function routes(requested: string): Answer {
  // A client with a baseURL of `<server>/api/` reaches the same routes.
  const path = requested.replace(/^\/api(?=\/)/, '');
  if (path.startsWith('/ok')) return { status: 200 };
  if (path.startsWith('/fail')) return { status: 500 };
  if (path.startsWith('/hang')) return undefined;
  const match = /^\/status\/(\d+)(?:\?([^=]+)=(.*))?$/.exec(path);
  if (match === null) return { status: 404 };
  const headers = match[2] === undefined ? {} : { [match[2]]: decodeURIComponent(match[3]!) };
  return { status: Number(match[1]), headers };
}
