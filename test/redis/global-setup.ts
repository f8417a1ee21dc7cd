import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { redisServerAvailable, SKIP_REASON } from './helpers/redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why dist/ could not be built for the replica processes, if it could not. */
    replicaBuildError: string | undefined;
  }
}

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs once before every test file. The redis scenarios start replicas as
 * plain Node processes that import the built package (`dist/`), so it is
 * rebuilt here when it is missing or older than `lib/` (CI builds before
 * testing, so there it is fresh). Without a redis-server nothing is built and
 * the one line saying why those tests are skipped is printed.
 */
export default function setup(project: TestProject): void {
  project.provide('replicaBuildError', undefined);
  let available: boolean;
  try {
    available = redisServerAvailable();
  } catch {
    // REQUIRE_REDIS=1 without a binary: each redis test file fails on its own, naming the cause.
    return;
  }
  if (!available) {
    console.log(SKIP_REASON);
    return;
  }
  if (!isStale()) return;
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) {
    project.provide(
      'replicaBuildError',
      `npm run build failed (${build.error?.message ?? `exit ${build.status}`}):\n${build.stdout}\n${build.stderr}`,
    );
  }
}

function isStale(): boolean {
  const built = join(root, 'dist', 'redis', 'index.js');
  if (!existsSync(built)) return true;
  return newestMtime(join(root, 'lib')) > statSync(built).mtimeMs;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts'))
      newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}
