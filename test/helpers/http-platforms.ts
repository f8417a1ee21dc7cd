import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { afterEach } from 'vitest';
import { CapturingLogger } from './nest-app.js';

/** The HTTP platforms Nest ships, for suites that must hold on both. */
export const HTTP_PLATFORMS = ['express', 'fastify'] as const;
export type HttpPlatform = (typeof HTTP_PLATFORMS)[number];

/**
 * Starts applications on `platform`, listening on a port the OS picks on
 * loopback, and closes every one after each test. Resolves with the
 * application and its base URL.
 */
export function platformApps(platform: HttpPlatform) {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    while (apps.length > 0) await apps.pop()!.close();
  });
  return async (
    imports: unknown[],
    { controllers = [], providers = [] }: { controllers?: unknown[]; providers?: unknown[] } = {},
  ): Promise<{ app: INestApplication; url: string }> => {
    const logger = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: imports as never[],
      controllers: controllers as never[],
      providers: providers as never[],
    })
      .setLogger(logger)
      .compile();
    const app =
      platform === 'fastify'
        ? moduleRef.createNestApplication(new FastifyAdapter(), { logger })
        : moduleRef.createNestApplication({ logger });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
  };
}
