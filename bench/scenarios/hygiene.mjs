// Scenario 6: hygiene. A process that used a breaker (a call, a trip, a call
// left hanging with a deadline) must exit on its own: a breaker must never be
// the reason a process stays alive. Each case runs in its own child, killed
// after `killAfterMs` if it has not exited by then.

import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./hygiene-child.mjs', import.meta.url));

export const HYGIENE_CASES = [
  { name: 'ours:call', label: 'ours: created, one call', ours: true },
  { name: 'ours:trip', label: 'ours: tripped open, one rejection', ours: true },
  { name: 'ours:hang', label: 'ours: call left hanging, timeoutMs 60,000', ours: true },
  { name: 'ours:time-window', label: 'ours: time window, calls', ours: true },
  { name: 'opossum:call', label: 'opossum (defaults): created, one call' },
  { name: 'opossum:trip', label: 'opossum (defaults): tripped open, one rejection' },
  { name: 'opossum:hang', label: 'opossum (defaults, timeout 60,000): call left hanging' },
  { name: 'cockatiel:call', label: 'cockatiel Consecutive(5): created, one call' },
  { name: 'cockatiel:trip', label: 'cockatiel Consecutive(5): tripped open, one rejection' },
];

function runCase(spec, killAfterMs) {
  return new Promise((resolve) => {
    const started = performance.now();
    let readyAt;
    let killed = false;
    let stderr = '';
    const child = spawn(process.execPath, [CHILD, spec.name], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk) => {
      if (readyAt === undefined && String(chunk).includes('ready')) readyAt = performance.now();
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, killAfterMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const ended = performance.now();
      resolve({
        ...spec,
        exited: !killed && code === 0,
        killed,
        code,
        signal,
        ms: ended - started,
        afterReadyMs: readyAt === undefined ? undefined : ended - readyAt,
        error: stderr.trim() === '' ? undefined : stderr.trim().split('\n').slice(-3).join(' | '),
      });
    });
  });
}

/** Starts every case at once (they mostly wait); resolves when all have exited or been killed. */
export async function hygiene({ killAfterMs = 10_000 } = {}) {
  const rows = await Promise.all(HYGIENE_CASES.map((spec) => runCase(spec, killAfterMs)));
  return { title: 'Hygiene', killAfterMs, rows };
}
