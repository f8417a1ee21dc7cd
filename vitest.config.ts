import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Nest relies on legacy decorators and design:paramtypes; oxc needs both switched on
  // (the key is the singular `decorator`: the plural is silently ignored).
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  test: {
    include: ['test/**/*.spec.ts', 'sample/test/**/*.spec.ts'],
    setupFiles: ['reflect-metadata'],
    environment: 'node',
    testTimeout: 20_000,
  },
});
