import { describeFault, describeValue } from '../core/options/option.messages.js';

/**
 * The texts of `nestjs-circuit-breaker/grpc`: each names the breaker and the
 * option, and says what to do.
 *
 * @internal
 */
export const grpcMessages = {
  notABreaker: (value: unknown): string =>
    `withCircuitBreaker(): option "breaker" must be a Breaker (a plain breaker, or a per-key family built with "perKey"), got ${describeValue(value)}. Pass registry.get(name) or a breaker you built.`,
  notAFunction: (breaker: string, option: 'key' | 'skip', value: unknown): string =>
    `Circuit breaker "${breaker}" in withCircuitBreaker(): option "${option}" must be a function of the request, got ${describeValue(value)}. Pass a function, or leave the option out.`,
  keyOnPlainBreaker: (breaker: string): string =>
    `Circuit breaker "${breaker}" in withCircuitBreaker(): option "key" needs a per-key family, but this breaker has no "perKey" option, so every call shares it. Build the breaker with "perKey: { maxKeys }", or leave "key" out.`,
  skipThrew: (breaker: string, fault: unknown): string =>
    `Circuit breaker "${breaker}" in withCircuitBreaker(): option "skip" threw ${describeFault(fault)}; the call went through the breaker. Make the skip function return true or false. Later faults of this site's skip function are not reported again.`,
  startFailed: (breaker: string, fault: unknown): string =>
    `Circuit breaker "${breaker}" could not admit the gRPC call: ${describeFault(fault)}.`,
};
