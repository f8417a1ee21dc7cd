/**
 * What says a test runner is running this process, in the order looked at:
 * vitest sets `VITEST`, Jest `JEST_WORKER_ID` (and `NODE_ENV=test`),
 * `node --test` `NODE_TEST_CONTEXT` in the processes it starts; `NODE_ENV=test`
 * covers any runner that sets it, or an application that says so itself; and
 * global `describe()` and `it()` functions are what Mocha, Jasmine, Jest and
 * vitest with `globals: true` define.
 *
 * @internal
 */
export function testRunnerOf(
  env: Readonly<Record<string, string | undefined>>,
  globals: object,
): string | undefined {
  for (const variable of ['VITEST', 'JEST_WORKER_ID', 'NODE_TEST_CONTEXT'])
    if (env[variable] !== undefined && env[variable] !== '') return variable;
  if (env.NODE_ENV === 'test') return 'NODE_ENV=test';
  const { describe, it } = globals as { describe?: unknown; it?: unknown };
  if (typeof describe === 'function' && typeof it === 'function') return 'describe() and it()';
  return undefined;
}
