import { faultInjectionMessages } from './fault-injection.messages.js';

/**
 * What a call gets when `injectFault()` made it fail or refused it as
 * overloaded: the dependency was not called. Shaped like the errors it stands
 * for, so that the default classification counts it as they would count: a
 * failure (category `other`), or, for an overload, a 429 with `retryAfterMs`
 * (`overload`, pausing the breaker for that long when overload handling is
 * on). Your own classifiers see it too; recognise it by `code`.
 *
 * @publicApi
 */
export class InjectedFaultError extends Error {
  declare readonly name: 'InjectedFaultError';
  readonly code = 'INJECTED_FAULT' as const;
  /** For an injected overload: 429, the status the default classification reads. */
  readonly status: 429 | undefined;

  constructor(
    readonly breakerName: string,
    readonly fault: 'failure' | 'overload',
    /** For an injected overload: the pause it asks for, if any. */
    readonly retryAfterMs?: number,
  ) {
    super(
      fault === 'failure'
        ? faultInjectionMessages.injectedFailure(breakerName)
        : faultInjectionMessages.injectedOverload(breakerName, retryAfterMs),
    );
    this.status = fault === 'overload' ? 429 : undefined;
  }
}
Object.defineProperty(InjectedFaultError.prototype, 'name', { value: 'InjectedFaultError' });
