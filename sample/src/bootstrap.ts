import 'reflect-metadata';
import type { DynamicModule, INestApplication, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { AppModule } from './app.module.js';
import { UpstreamServer } from './upstream/upstream.server.js';

export interface RunningSample {
  app: INestApplication;
  /** Base URL of the sample application. */
  url: string;
  upstreams: { primary: UpstreamServer; warehouses: Record<'a' | 'b', UpstreamServer> };
  close(): Promise<void>;
}

/** Starts the three fake dependencies and the sample application, all on loopback. */
export async function startSample(
  options: {
    port?: number;
    logger?: LoggerService | LogLevel[] | false;
    /** The circuit breaker module instead of the application's own (see `AppModule.register()`). */
    breakers?: DynamicModule;
  } = {},
): Promise<RunningSample> {
  const primary = new UpstreamServer('primary');
  const a = new UpstreamServer('warehouse-a');
  const b = new UpstreamServer('warehouse-b');
  await Promise.all([primary.start(), a.start(), b.start()]);
  const app = await NestFactory.create(
    AppModule.register(
      { primary: primary.url, warehouses: { a: a.url, b: b.url } },
      options.breakers,
    ),
    {
      logger: options.logger ?? ['error', 'warn', 'log'],
      // Keep-alive connections would otherwise hold close() for seconds.
      forceCloseConnections: true,
      // A bad option (a mistyped CB_* variable) rejects here with its message, instead of exiting the process.
      abortOnError: false,
    },
  ).catch(async (error: unknown) => {
    await Promise.all([primary.close(), a.close(), b.close()]);
    throw error;
  });
  app.enableShutdownHooks();
  await app.listen(options.port ?? 0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    upstreams: { primary, warehouses: { a, b } },
    async close() {
      await app.close();
      await Promise.all([primary.close(), a.close(), b.close()]);
    },
  };
}
