import { afterEach, beforeEach } from 'vitest';

/**
 * Collects every unhandled rejection and uncaught exception while each test of
 * the calling suite runs, so that a test can assert there were none (vitest
 * alone reports them after the fact, against whichever test ran last).
 */
export function collectUnhandled(): unknown[] {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
    process.on('uncaughtException', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
    process.off('uncaughtException', onUnhandled);
  });
  return unhandled;
}
