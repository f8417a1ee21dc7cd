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

/**
 * Starts Nest applications for the calling suite (`compile()`, then `init()`,
 * which runs the start-up checks) and closes every one after each test.
 */
export function nestApps(): (imports: unknown[], providers?: unknown[], controllers?: unknown[], logger?: CapturingLogger) => Promise<INestApplication> {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    while (apps.length > 0) await apps.pop()!.close();
  });
  return async (imports, providers = [], controllers = [], logger = new CapturingLogger()) => {
    const moduleRef = await Test.createTestingModule({ imports: imports as never[], providers: providers as never[], controllers: controllers as never[] })
      .setLogger(logger)
      .compile();
    const app = moduleRef.createNestApplication();
    apps.push(app);
    await app.init();
    return app;
  };
}
