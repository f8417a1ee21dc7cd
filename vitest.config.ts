import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const lib = (path: string) => fileURLToPath(new URL(`./lib/${path}`, import.meta.url));

export default defineConfig({
  // Nest relies on legacy decorators and design:paramtypes; oxc needs both switched on
  // (the key is the singular `decorator`: the plural is silently ignored).
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  // The sample imports the package by name, as an application would; tests run it from source.
  resolve: {
    alias: [
      { find: /^nestjs-circuit-breaker$/, replacement: lib('index.ts') },
      { find: /^nestjs-circuit-breaker\/(.+)$/, replacement: lib('$1/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.spec.ts', 'sample/test/**/*.spec.ts'],
    setupFiles: ['reflect-metadata'],
    // Builds dist/ for the redis scenarios' replica processes when it is stale (see the file).
    globalSetup: ['test/redis/global-setup.ts'],
    environment: 'node',
    testTimeout: 20_000,
  },
});
