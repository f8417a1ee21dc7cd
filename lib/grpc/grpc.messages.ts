import { describeValue } from '../core/options/option.messages.js';

/**
 * The texts of `nestjs-circuit-breaker/grpc`: each names the option and says
 * what to do.
 *
 * @internal
 */
export const grpcMessages = {
  notABreaker: (value: unknown): string =>
    `withCircuitBreaker(): option 'breaker' must be a Breaker (a plain breaker, or a per-key family built with 'perKey'), got ${describeValue(value)}. Pass registry.get(name) or a breaker you built.`,
  notAFunction: (breaker: string, option: 'key' | 'skip', value: unknown): string =>
    `withCircuitBreaker() of breaker '${breaker}': option '${option}' must be a function of the request, got ${describeValue(value)}. Pass a function, or leave the option out.`,
  keyOnPlainBreaker: (breaker: string): string =>
    `withCircuitBreaker() of breaker '${breaker}': option 'key' needs a per-key family, but this breaker has no 'perKey' option, so every call shares it. Build the breaker with 'perKey: { maxKeys }', or leave 'key' out.`,
  skipThrew: (breaker: string, fault: unknown): string =>
    `withCircuitBreaker() of breaker '${breaker}': option 'skip' threw ${describeValue(fault)}; the call went through the breaker. Fix the function: it runs for every call.`,
  startFailed: (breaker: string, fault: unknown): string =>
    `Breaker '${breaker}' could not admit the gRPC call: ${describeValue(fault)}.`,
};
