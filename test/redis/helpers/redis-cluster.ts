import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';

/**
 * Whether a Redis Cluster can be started: `redis-server` and `redis-cli` on
 * PATH. Without them the cluster tests are skipped, unless `REQUIRE_REDIS=1`
 * (CI sets it), which makes their absence an error.
 */
export function redisClusterAvailable(): boolean {
  const missing = ['redis-server', 'redis-cli'].filter((binary) => {
    const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
    return probe.error !== undefined || probe.status !== 0;
  });
  if (missing.length > 0 && process.env.REQUIRE_REDIS === '1')
    throw new Error(
      `REQUIRE_REDIS=1 but ${missing.join(' and ')} cannot run. Install them: apt-get install -y redis-server redis-tools.`,
    );
  return missing.length === 0;
}

export const CLUSTER_SKIP_REASON =
  'test/redis: the Redis Cluster tests are skipped: no redis-server or redis-cli on PATH. Install them (apt-get install -y redis-server redis-tools), or set REQUIRE_REDIS=1 to make their absence an error.';

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A node of the cluster: its port, and its slots once the cluster is made. */
export interface ClusterNode {
  readonly port: number;
  /** `[from, to]` ranges of the slots this master owns. */
  slots: [number, number][];
}

/**
 * Three masters (no replicas) on free loopback ports, in a temporary
 * directory of their own, without persistence; `close()` kills them and
 * removes the directory.
 */
export class RedisCluster {
  private readonly children = new Map<number, ChildProcess>();

  private constructor(
    readonly nodes: ClusterNode[],
    private readonly dir: string,
    private readonly fullCoverage: boolean,
  ) {}

  /** `fullCoverage: false`: `cluster-require-full-coverage no`, the live masters serve their slots while one is down. */
  static async start(masters = 3, { fullCoverage = true } = {}): Promise<RedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'cb-cluster-'));
    const ports: number[] = [];
    // The cluster bus listens on port + 10,000: both must be free.
    while (ports.length < masters) {
      const port = await freePort();
      if (port <= 55_535 && !ports.includes(port) && (await isFree(port + 10_000)))
        ports.push(port);
    }
    const cluster = new RedisCluster(
      ports.map((port) => ({ port, slots: [] })),
      dir,
      fullCoverage,
    );
    try {
      for (const port of ports) await cluster.launch(port);
      const create = spawnSync(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...ports.map((p) => `127.0.0.1:${p}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { encoding: 'utf8', timeout: 20_000 },
      );
      if (create.status !== 0)
        throw new Error(`redis-cli --cluster create failed:\n${create.stdout}\n${create.stderr}`);
      await cluster.waitOk();
      await cluster.readSlots();
      return cluster;
    } catch (error) {
      await cluster.close();
      throw error;
    }
  }

  /** A Cluster client of its own, routing sharded subscriptions per slot as the store needs. */
  client(shardedSubscribers = true): Cluster {
    const client = new Cluster(
      this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
      { shardedSubscribers, clusterRetryStrategy: () => 100 },
    );
    client.on('error', () => undefined);
    return client;
  }

  /** A plain connection to one node (for INFO, CLUSTER and the like). */
  node(port: number): Redis {
    const redis = new Redis(port, '127.0.0.1', { lazyConnect: false });
    redis.on('error', () => undefined);
    return redis;
  }

  /** The node owning `slot`. */
  owner(slot: number): ClusterNode {
    const found = this.nodes.find((n) => n.slots.some(([from, to]) => slot >= from && slot <= to));
    if (found === undefined) throw new Error(`no node owns slot ${slot}`);
    return found;
  }

  /** Kills the master on `port` (SIGKILL: an outage of its slots) and waits until it is gone. */
  async kill(port: number): Promise<void> {
    const child = this.children.get(port);
    if (child === undefined) return;
    this.children.delete(port);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    running.delete(child);
  }

  /** Starts the master on `port` again, empty, from its cluster config: it rejoins with its slots; resolves once the cluster is ok. */
  async restart(port: number): Promise<void> {
    await this.kill(port);
    await this.launch(port);
    await this.waitOk();
  }

  async close(): Promise<void> {
    for (const child of this.children.values()) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      running.delete(child);
    }
    this.children.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async waitOk(): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const states = await Promise.all(
        this.nodes.map(async ({ port }) => {
          const redis = this.node(port);
          try {
            return /cluster_state:ok/.test(String(await redis.cluster('INFO')));
          } catch {
            return false;
          } finally {
            redis.disconnect();
          }
        }),
      );
      if (states.every(Boolean)) return;
      if (Date.now() > deadline)
        throw new Error('the cluster did not reach cluster_state:ok in 20 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private async readSlots(): Promise<void> {
    const redis = this.node(this.nodes[0]!.port);
    try {
      for (const [from, to, [, port] = ['', 0]] of await redis.cluster('SLOTS'))
        this.nodes.find((n) => n.port === port)!.slots.push([from, to]);
    } finally {
      redis.disconnect();
    }
  }

  private launch(port: number): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(this.dir, `nodes-${port}.conf`),
        '--dir',
        this.dir,
        '--save',
        '',
        '--appendonly',
        'no',
        // A killed node is found failed within about a second, not the default 15 s.
        '--cluster-node-timeout',
        '1000',
        '--cluster-require-full-coverage',
        this.fullCoverage ? 'yes' : 'no',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    running.add(child);
    this.children.set(port, child);
    return new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(
        () => reject(new Error(`cluster node ${port} was not ready within 5 s:\n${output}`)),
        5_000,
      );
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          child.stdout!.removeAllListeners('data');
          child.stdout!.resume();
          resolve();
        }
      });
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`cluster node ${port} exited (${code ?? signal}):\n${output}`));
      });
    });
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) =>
    server.once('error', reject).listen(0, '127.0.0.1', resolve),
  );
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('no port was assigned');
  return address.port;
}

function isFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
