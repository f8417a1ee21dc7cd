// The rows of the HTTP benchmark: one route of bench/http/server.mjs each
// (GET /<path>/:id), the status every answer must have, and the row each is
// compared with in the same round.
//
// A row with `pending` is part of the table but not measured yet: it says why.

export const ROWS = [
  {
    id: 'bare',
    label: 'bare route (in-process fake upstream)',
    status: 200,
    baseline: 'bare',
  },
  {
    id: 'decorated',
    label: '@CircuitBreaker() on the client (closed)',
    status: 200,
    baseline: 'bare',
  },
  {
    id: 'guard',
    label: '@RequireCircuitBreaker() on the route (closed)',
    status: 200,
    baseline: 'bare',
  },
  {
    id: 'bare-intercepted',
    label: 'bare route through a pass-through interceptor',
    status: 200,
    baseline: 'bare',
  },
  {
    id: 'interceptor',
    label: '@UseCircuitBreaker() on the route (closed)',
    status: 200,
    baseline: 'bare',
    also: 'bare-intercepted',
  },
  {
    id: 'bare-observable',
    label: 'bare route returning an Observable (defer)',
    status: 200,
    baseline: 'bare',
  },
  {
    id: 'operator',
    label: 'circuitBreaker() on that Observable (closed)',
    status: 200,
    baseline: 'bare',
    also: 'bare-observable',
  },
  {
    id: 'per-key',
    label: 'per-key @CircuitBreaker(), 10,000 distinct keys',
    status: 200,
    baseline: 'bare',
  },
  {
    id: 'shared',
    label: 'shared through the Redis store (closed)',
    status: 200,
    baseline: 'bare',
    also: 'decorated',
    redis: true,
  },
  {
    id: 'opossum',
    label: 'opossum 9, wrapped as its README shows',
    status: 200,
    baseline: 'bare',
    peer: true,
  },
  {
    id: 'cockatiel',
    label: 'cockatiel 3, wrapped as its README shows',
    status: 200,
    baseline: 'bare',
    peer: true,
  },
  {
    id: 'bare-503',
    label: 'bare route answering 503 + Retry-After itself',
    status: 503,
    baseline: 'bare-503',
  },
  {
    id: 'thrown-503',
    label: 'bare route throwing ServiceUnavailableException',
    status: 503,
    baseline: 'bare-503',
  },
  {
    id: 'open',
    label: '@CircuitBreaker() open: 503 + Retry-After by the filter',
    status: 503,
    baseline: 'bare-503',
  },
  {
    id: 'guard-open',
    label: '@RequireCircuitBreaker() open: 503 + Retry-After by the guard',
    status: 503,
    baseline: 'bare-503',
  },
  {
    id: 'shared-open',
    label: 'shared through the Redis store (open)',
    status: 503,
    baseline: 'bare-503',
    also: 'open',
    redis: true,
  },
];

export const ADAPTERS = ['express', 'fastify'];
