// nestjs-circuit-breaker/websockets: answers for @nestjs/websockets gateways
// (an optional peer; the root entry never imports it).
export { CircuitBreakerWsExceptionFilter } from './circuit-breaker-ws.exception-filter.js';
export { toWsException } from './circuit-breaker-ws.mapping.js';
