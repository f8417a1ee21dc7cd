// nestjs-circuit-breaker/graphql: answers for @nestjs/graphql resolvers and classification of
// GraphQL responses (needs the optional peer graphql; the root entry never imports it).
export { CircuitBreakerGraphQLExceptionFilter } from './circuit-breaker-graphql.exception-filter.js';
export { toGraphQLError } from './circuit-breaker-graphql.mapping.js';
export { classifyGraphQLResult } from './graphql-result.classifier.js';
export { toGraphQLExtensions } from '../circuit-breaker-transport.mapping.js';
export type { CircuitBreakerErrorExtensions } from '../circuit-breaker-transport.mapping.js';
