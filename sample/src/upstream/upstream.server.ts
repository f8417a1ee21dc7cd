import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the fake dependency behaves right now:
 * - `healthy`: answers at once;
 * - `failing`: 500 on every call;
 * - `hanging`: accepts the request and never answers;
 * - `slow`: answers after `delayMs`;
 * - `overloaded`: 429 with `Retry-After: retryAfterSeconds`.
 * `GET /products/bad` is always a 400: the caller's mistake, whatever the mode.
 */
export type UpstreamMode = 'healthy' | 'failing' | 'hanging' | 'slow' | 'overloaded';

export interface UpstreamBehaviour {
  mode: UpstreamMode;
  delayMs?: number;
  retryAfterSeconds?: number;
}

const PRODUCTS: Record<string, { id: string; name: string; price: number }> = {
  '1': { id: '1', name: 'Espresso cup', price: 12 },
  '2': { id: '2', name: 'Milk jug', price: 18 },
  '3': { id: '3', name: 'Tamper', price: 30 },
};

/**
 * A real HTTP dependency on a loopback port, whose behaviour the demo and the
 * tests switch at runtime (`setBehaviour()`, or `POST /__behaviour` with
 * curl). It counts the requests it received, so a test can prove that an open
 * breaker kept traffic away.
 */
export class UpstreamServer {
  requests = 0;
  private behaviour: UpstreamBehaviour = { mode: 'healthy' };
  private readonly server: Server;

  constructor(readonly label: string) {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  /** Listens on a free loopback port; resolves to the base URL. */
  async start(port = 0): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve());
    });
    return this.url;
  }

  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  setBehaviour(behaviour: UpstreamBehaviour): void {
    this.behaviour = { ...behaviour };
  }

  get mode(): UpstreamMode {
    return this.behaviour.mode;
  }

  /** Stops listening and drops every connection, hung ones included. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://upstream');
    if (req.method === 'POST' && url.pathname === '/__behaviour') {
      this.readJson(req).then(
        (body) => {
          this.setBehaviour(body as UpstreamBehaviour);
          this.reply(res, 200, { upstream: this.label, ...this.behaviour });
        },
        () =>
          this.reply(res, 400, {
            message:
              'expected JSON: { "mode": "healthy" | "failing" | "hanging" | "slow" | "overloaded" }',
          }),
      );
      return;
    }
    this.requests++;
    if (url.pathname === '/products/bad')
      return this.reply(res, 400, { message: 'product ids are digits' });
    const { mode, delayMs = 1_500, retryAfterSeconds = 2 } = this.behaviour;
    switch (mode) {
      case 'failing':
        return this.reply(res, 500, { message: `${this.label} is failing` });
      case 'hanging':
        return; // the request is accepted and never answered
      case 'overloaded':
        res.setHeader('Retry-After', String(retryAfterSeconds));
        return this.reply(res, 429, { message: `${this.label} is overloaded` });
      case 'slow': {
        const timer = setTimeout(() => this.route(url, res), delayMs);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      default:
        return this.route(url, res);
    }
  }

  private route(url: URL, res: ServerResponse): void {
    const [, resource, id] = url.pathname.split('/');
    if (resource === 'products' && id !== undefined) {
      const product = PRODUCTS[id];
      return product
        ? this.reply(res, 200, product)
        : this.reply(res, 404, { message: `no product ${id}` });
    }
    if (resource === 'search') {
      const q = (url.searchParams.get('q') ?? '').toLowerCase();
      return this.reply(
        res,
        200,
        Object.values(PRODUCTS).filter((p) => p.name.toLowerCase().includes(q)),
      );
    }
    if (resource === 'prices' && id !== undefined)
      return this.reply(res, 200, { id, price: PRODUCTS[id]?.price ?? 0, currency: 'EUR' });
    if (resource === 'stock' && id !== undefined)
      return this.reply(res, 200, { sku: id, available: 7, warehouse: this.label });
    return this.reply(res, 404, { message: 'not found' });
  }

  private reply(res: ServerResponse, status: number, body: unknown): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private readJson(req: IncomingMessage): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let data = '';
      req.on('data', (chunk: Buffer) => (data += chunk.toString()));
      req.on('end', () => {
        try {
          resolve(JSON.parse(data));
        } catch (error) {
          reject(error);
        }
      });
      req.on('error', reject);
    });
  }
}
