import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';

/**
 * Whether the tests that need a real Redis can run: a `redis-server` binary on
 * PATH. Without one they are skipped, unless `REQUIRE_REDIS=1` (CI sets it),
 * which makes the absence an error of every file that needs it.
 */
export function redisServerAvailable(): boolean {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  const available = probe.error === undefined && probe.status === 0;
  if (!available && process.env.REQUIRE_REDIS === '1') {
    throw new Error(
      `REQUIRE_REDIS=1 but redis-server cannot run (${probe.error?.message ?? `exit ${probe.status}`}). Install it: apt-get install -y redis-server.`,
    );
  }
  return available;
}

export const SKIP_REASON =
  'test/redis: the tests that need a real Redis are skipped: no redis-server on PATH. Install it (apt-get install -y redis-server), or set REQUIRE_REDIS=1 to make its absence an error.';

// Every server started by this process, so that none outlives it even when a test throws before afterAll.
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A redis-server of its own on a free loopback port, without persistence. */
export class RedisServer {
  private child: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    // A port found free can be taken before redis binds it: try a few.
    let lastError: unknown;
    for (let attempt = 0; attempt < 5; attempt++) {
      const server = new RedisServer(await freePort());
      try {
        await server.launch();
        return server;
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Kills the server at once (SIGKILL: an outage, not a shutdown) and waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    this.child = undefined;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    running.delete(child);
  }

  /** Freezes the server (SIGSTOP): connections stay open, nothing answers. A slow Redis at its worst. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /**
   * Starts a fresh, empty server on the same port. The port was free for the
   * whole outage: something else (a port probe of another test file) may hold
   * it for a moment, so the relaunch is tried a few times, as start() does.
   */
  async restart(): Promise<void> {
    await this.kill();
    let lastError: unknown;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await this.launch();
        return;
      } catch (error) {
        lastError = error;
        await new Promise((resolve) => setTimeout(resolve, 100 * (attempt + 1)));
      }
    }
    throw lastError;
  }

  private launch(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        tmpdir(),
        '--loglevel',
        'notice',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    running.add(child);
    return new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(
        () =>
          fail(new Error(`redis-server on port ${this.port} was not ready within 5 s:\n${output}`)),
        5_000,
      );
      const fail = (error: Error) => {
        clearTimeout(timer);
        child.kill('SIGKILL');
        running.delete(child);
        reject(error);
      };
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          this.child = child;
          child.stdout!.removeAllListeners('data');
          child.stdout!.resume();
          resolve();
        }
      });
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code, signal) => {
        if (this.child !== child)
          fail(
            new Error(
              `redis-server on port ${this.port} exited (${code ?? signal}) before it was ready:\n${output}`,
            ),
          );
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
