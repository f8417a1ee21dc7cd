import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import axios, { type AxiosInstance } from 'axios';
import { afterEach } from 'vitest';
import { countingServer, routes, type CountingServer } from './counting-server.js';

/** What a test leaves to undo: servers, agents, subscriptions, run in reverse after each test of the file. */
export const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** The counting upstream with the usual routes, closed after the test. */
export async function upstream(): Promise<CountingServer> {
  const server = await countingServer(routes);
  cleanups.push(() => server.close());
  return server;
}

/** An instance whose every request opens its own connection, so the server's count of connections means something. */
export function client(baseURL?: string): AxiosInstance {
  const agent = new Agent({ keepAlive: false });
  cleanups.push(() => agent.destroy());
  return axios.create({ baseURL, httpAgent: agent });
}

/** The rejection of `promise`; an error if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${String(value)}`);
    },
    (error: unknown) => error,
  );
}

/** Lets the promise reactions queued so far run. */
export async function settled(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** An upstream that sends its headers and one chunk, then holds the body until the client goes. */
export async function holdingUpstream(): Promise<{ url: string; clientGone: Promise<void> }> {
  let closed!: () => void;
  const clientGone = new Promise<void>((resolve) => (closed = resolve));
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.write('first');
    response.on('close', closed);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, clientGone };
}
