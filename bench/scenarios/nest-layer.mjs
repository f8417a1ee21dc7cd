// Scenario 7: the Nest layer. A `@CircuitBreaker()` method against a direct
// `breaker.execute`, and the `circuitBreaker()` operator on `of(1)` against the
// bare observable. This scenario measures only once the package exports both.

export const NEST_PENDING_MESSAGE = 'pending: the Nest layer has not landed';

export async function nestLayer() {
  const pkg = await import('../../dist/index.js');
  const decorator = typeof pkg.CircuitBreaker === 'function';
  const operator = typeof pkg.circuitBreaker === 'function';
  if (!decorator || !operator) {
    return {
      title: 'Nest layer',
      status: 'pending',
      short: NEST_PENDING_MESSAGE,
      message: NEST_PENDING_MESSAGE,
      exports: { CircuitBreaker: decorator, circuitBreaker: operator },
    };
  }
  return {
    title: 'Nest layer',
    status: 'not measured',
    short: 'landed, not measured yet',
    message:
      'the Nest layer has landed (dist/index.js exports CircuitBreaker and circuitBreaker), ' +
      'but this scenario does not measure it yet: the decorated-method and operator rows are not written.',
    exports: { CircuitBreaker: decorator, circuitBreaker: operator },
  };
}
