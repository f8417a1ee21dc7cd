// The client rows of the HTTP benchmark (bench/http/clients.mjs): outbound requests from this
// package's client integrations to a loopback upstream, each compared with the same client bare
// in the same round. A second bare client of each kind, compared with the first, is the noise floor.
// undici's compose() translates every handler between its two handler APIs, whatever the
// interceptor: a pass-through interceptor shows that cost, and the breaker rows are also compared
// with it (`also`). The dispatcher form, withCircuitBreaker(agent, options), hands the Agent the
// client's handler untranslated; its rows are also compared with the interceptor form.

export const CLIENT_ROWS = [
  {
    id: 'fetch-bare',
    client: 'fetch',
    label: 'global fetch, bare undici Agent',
    baseline: 'fetch-bare',
  },
  {
    id: 'fetch-bare-2',
    client: 'fetch',
    label: 'global fetch, a second bare Agent (noise floor)',
    baseline: 'fetch-bare',
    floor: true,
  },
  {
    id: 'fetch-composed',
    client: 'fetch',
    label: 'global fetch, Agent composed with a pass-through interceptor',
    baseline: 'fetch-bare',
    composed: true,
  },
  {
    id: 'fetch-breaker',
    client: 'fetch',
    label: 'global fetch, Agent composed with withCircuitBreaker() (closed)',
    baseline: 'fetch-bare',
    also: 'fetch-composed',
    wired: true,
  },
  {
    id: 'fetch-breaker-dispatcher',
    client: 'fetch',
    label: 'global fetch, Agent wrapped by withCircuitBreaker(agent, ...) (closed)',
    baseline: 'fetch-bare',
    also: 'fetch-breaker',
    wired: true,
    form: 'dispatcher',
  },
  {
    id: 'request-bare',
    client: 'request',
    label: "undici's request(), bare Agent",
    baseline: 'request-bare',
  },
  {
    id: 'request-bare-2',
    client: 'request',
    label: "undici's request(), a second bare Agent (noise floor)",
    baseline: 'request-bare',
    floor: true,
  },
  {
    id: 'request-composed',
    client: 'request',
    label: "undici's request(), Agent composed with a pass-through interceptor",
    baseline: 'request-bare',
    composed: true,
  },
  {
    id: 'request-breaker',
    client: 'request',
    label: "undici's request(), Agent composed with withCircuitBreaker() (closed)",
    baseline: 'request-bare',
    also: 'request-composed',
    wired: true,
  },
  {
    id: 'request-breaker-dispatcher',
    client: 'request',
    label: "undici's request(), Agent wrapped by withCircuitBreaker(agent, ...) (closed)",
    baseline: 'request-bare',
    also: 'request-breaker',
    wired: true,
    form: 'dispatcher',
  },
  {
    id: 'http-service-bare',
    client: 'http-service',
    label: "@nestjs/axios' HttpService, bare",
    baseline: 'http-service-bare',
  },
  {
    id: 'http-service-bare-2',
    client: 'http-service',
    label: 'HttpService, a second bare one (noise floor)',
    baseline: 'http-service-bare',
    floor: true,
  },
  {
    id: 'http-service-breaker',
    client: 'http-service',
    label: 'HttpService with provideAxiosCircuitBreaker() (closed)',
    baseline: 'http-service-bare',
    wired: true,
  },
];
