import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A real HTTP server on loopback that counts what reaches it: connections
 * opened and closed, requests per path. Paths: `/ok` (200), `/fail` (500),
 * `/hang` (never answers), `/429?h=<header>&v=<value>` (429 with that header),
 * `/big-fail?bytes=<n>` (500 with a body of n bytes).
 */
export interface CountingServer {
  readonly origin: string;
  readonly connections: { opened: number; closed: number };
  readonly requests: Map<string, number>;
  /** Requests received, all paths. */
  total(): number;
  /** Resolves once `count` requests have arrived in all. */
  whenRequests(count: number): Promise<void>;
  /** Resolves once `count` connections have closed in all. */
  whenClosed(count: number): Promise<void>;
  close(): Promise<void>;
}

const ROUTES: Record<string, Route> = {
  '/ok': (_req, res) => res.end('ok'),
  '/fail': (_req, res) => {
    res.statusCode = 500;
    res.end('down');
  },
  '/hang': () => {},
  '/429': (req, res) => {
    const query = new URL(req.url!, 'http://x').searchParams;
    res.statusCode = 429;
    res.setHeader(query.get('h')!, query.get('v')!);
    res.end('slow down');
  },
  '/headers': (_req, res) => {
    res.setHeader('x-many', ['1', '2']);
    res.setHeader('X-Mixed-Case', 'Yes');
    res.end('ok');
  },
  '/big-fail': (req, res) => {
    const bytes = Number(new URL(req.url!, 'http://x').searchParams.get('bytes'));
    res.statusCode = 500;
    res.setHeader('content-length', bytes);
    res.end(Buffer.alloc(bytes, 120));
  },
};

export async function startCountingServer(): Promise<CountingServer> {
  const sockets = new Set<Socket>();
  const connections = { opened: 0, closed: 0 };
  const requests = new Map<string, number>();
  const waiters = new Set<() => void>();
  const wake = (): void => waiters.forEach((w) => w());
  const until = (done: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (!done()) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  const total = (): number => [...requests.values()].reduce((a, b) => a + b, 0);
  const server = createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    requests.set(path, (requests.get(path) ?? 0) + 1);
    ROUTES[path]!(req, res);
    wake();
  });
  server.on('connection', (socket: Socket) => {
    connections.opened++;
    sockets.add(socket);
    socket.on('close', () => {
      connections.closed++;
      sockets.delete(socket);
      wake();
    });
    wake();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    connections,
    requests,
    total,
    whenRequests: (count) => until(() => total() >= count),
    whenClosed: (count) => until(() => connections.closed >= count),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
