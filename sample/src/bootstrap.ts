import 'reflect-metadata';
import type { DynamicModule, INestApplication, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Transport } from '@nestjs/microservices';
import type { AddressInfo, Server } from 'node:net';
import { AppModule } from './app.module.js';
import { UpstreamServer } from './upstream/upstream.server.js';

export interface RunningSample {
  app: INestApplication;
  /** Base URL of the sample application. */
  url: string;
  /** The live dashboard of its breakers. */
  dashboardUrl: string;
  /** Port of its TCP microservice (the same application, hybrid). */
  rpcPort: number;
  upstreams: { primary: UpstreamServer; warehouses: Record<'a' | 'b', UpstreamServer> };
  close(): Promise<void>;
}

/** Starts the three fake dependencies and the sample application, all on loopback. */
export async function startSample(
  options: {
    port?: number;
    /** Force and reset buttons on the dashboard; default on. */
    dashboardControl?: boolean;
    rpcPort?: number;
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
      { control: options.dashboardControl },
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
  // The same controllers over TCP: inheritAppConfig gives the microservice the module's global filter.
  const microservice = app.connectMicroservice(
    { transport: Transport.TCP, options: { host: '127.0.0.1', port: options.rpcPort ?? 0 } },
    { inheritAppConfig: true },
  );
  await app.startAllMicroservices();
  await app.listen(options.port ?? 0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  const rpcPort = (microservice.unwrap<Server>().address() as AddressInfo).port;
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    dashboardUrl: `http://127.0.0.1:${port}/circuit-breakers`,
    rpcPort,
    upstreams: { primary, warehouses: { a, b } },
    async close() {
      await app.close();
      await Promise.all([primary.close(), a.close(), b.close()]);
    },
  };
}
