import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * The dependency every replica calls, in the test process: it answers as the
 * scenario says and counts the calls that reach it, which is how "exactly one
 * probe for the fleet" is observed.
 *
 * - `fail`: 500 at once; `ok`: 200 at once;
 * - `hold`: 200, but only when `release()` is called, so that calls stay in flight.
 */
export class Upstream {
  mode: 'fail' | 'ok' | 'hold' = 'ok';
  /** Calls that reached the upstream, by replica. */
  readonly hits = new Map<string, number>();
  private held: ServerResponse[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<Upstream> {
    let upstream: Upstream | undefined;
    const server = createServer((req, res) => upstream!.handle(req, res));
    upstream = new Upstream(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return upstream;
  }

  get url(): string {
    const address = this.server.address();
    if (typeof address !== 'object' || address === null)
      throw new Error('the upstream is not listening');
    return `http://127.0.0.1:${address.port}/`;
  }

  get totalHits(): number {
    let total = 0;
    for (const n of this.hits.values()) total += n;
    return total;
  }

  /** Stops holding: answers every held call with 200, and the calls to come too (mode `ok`). */
  release(): void {
    if (this.mode === 'hold') this.mode = 'ok';
    for (const res of this.held.splice(0)) res.end('ok');
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const replica = String(req.headers['x-replica']);
    this.hits.set(replica, (this.hits.get(replica) ?? 0) + 1);
    if (this.mode === 'hold') {
      this.held.push(res);
      return;
    }
    res.statusCode = this.mode === 'fail' ? 500 : 200;
    res.end(this.mode);
  }
}
