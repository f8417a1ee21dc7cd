import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const lib = (path: string) => fileURLToPath(new URL(`./lib/${path}`, import.meta.url));

/**
 * Tests of code that runs without Nest, outside test/core (the engine's own
 * tests). Listed by name: a file moved into test/core is still found there, and
 * a file not listed runs in `nest`, so no test can fall out of every project.
 */
const PURE_OUTSIDE_CORE = [
  'test/call-signal.spec.ts',
  'test/last-good-cache.spec.ts',
  'test/testing/manual-clock.spec.ts',
  'test/retry-after-header.spec.ts',
  'test/protection/protection.spec.ts',
  'test/protection/limit.spec.ts',
];

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
    setupFiles: ['reflect-metadata'],
    environment: 'node',
    testTimeout: 20_000,
    // One project per kind of test (`npx vitest run --project unit`, or `npm run test:unit`);
    // `npm test` runs them all. Every spec belongs to exactly one.
    projects: [
      {
        extends: true,
        // *.e2e.spec.ts files start an HTTP server: they run in `nest`, wherever they live.
        test: {
          name: 'unit',
          include: ['test/core/**/*.spec.ts', ...PURE_OUTSIDE_CORE],
          exclude: [...configDefaults.exclude, '**/*.e2e.spec.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'nest',
          include: ['test/**/*.spec.ts'],
          exclude: [
            ...configDefaults.exclude,
            'test/core/**/!(*.e2e).spec.ts',
            'test/redis/**',
            // Applications that tests install and run with their own vitest (test/tools/nest-new-recipe.spec.ts).
            'test/fixtures/**',
            ...PURE_OUTSIDE_CORE,
          ],
        },
      },
      {
        extends: true,
        test: {
          name: 'redis',
          include: ['test/redis/**/*.spec.ts'],
          // Builds dist/ for the redis scenarios' replica processes when it is stale (see the file).
          globalSetup: ['test/redis/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'sample',
          include: ['sample/test/**/*.spec.ts'],
          exclude: [...configDefaults.exclude, 'sample/test/**/*.browser.spec.ts'],
        },
      },
      {
        extends: true,
        // A real headless Chromium on the sample's dashboard (REQUIRE_BROWSER=1 in CI).
        test: {
          name: 'browser',
          include: ['sample/test/**/*.browser.spec.ts'],
          testTimeout: 45_000,
        },
      },
    ],
  },
});
