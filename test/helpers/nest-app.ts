import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach } from 'vitest';

/** Keeps the warnings the module logs (context `CircuitBreakerModule`), and nothing else. */
export class CapturingLogger implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown, context?: unknown): void {
    if (context === 'CircuitBreakerModule') this.warnings.push(String(message));
  }
}

/** What an application is built from besides its imports. */
export interface AppSetup {
  providers?: unknown[];
  controllers?: unknown[];
  /** Default: a `CapturingLogger`, which keeps the module's warnings and prints nothing. */
  logger?: LoggerService;
  /** Runs between `createNestApplication()` and `init()`: global filters and the like. */
  beforeInit?: (app: INestApplication) => void;
}

/** Starts an application; every one it started is closed after the test. */
export interface StartApp {
  (imports: unknown[], setup?: AppSetup): Promise<INestApplication>;
  /** Also runs `cleanup` after the test, in reverse order with the closing of the applications (a meter provider, a server). */
  onCleanup(cleanup: () => unknown): void;
}

/**
 * Starts Nest applications for the calling suite (`compile()`, then `init()`,
 * which runs the start-up checks) and closes every one after each test, also
 * one whose start-up failed.
 */
export function nestApps(): StartApp {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });
  const start = async (
    imports: unknown[],
    { providers = [], controllers = [], logger = new CapturingLogger(), beforeInit }: AppSetup = {},
  ) => {
    const moduleRef = await Test.createTestingModule({
      imports: imports as never[],
      providers: providers as never[],
      controllers: controllers as never[],
    })
      .setLogger(logger)
      .compile();
    const app = moduleRef.createNestApplication({ logger });
    // A test may close an application itself (to check what shutdown does); closing it again after the test is a no-op.
    const close = app.close.bind(app);
    let closed: Promise<void> | undefined;
    app.close = () => (closed ??= close());
    cleanups.push(() => app.close());
    beforeInit?.(app);
    await app.init();
    return app;
  };
  return Object.assign(start, {
    onCleanup: (cleanup: () => unknown) => void cleanups.push(cleanup),
  });
}
