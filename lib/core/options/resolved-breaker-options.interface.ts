import type { WindowOptions } from './breaker-options.js';
import type { ErrorClassifier, ResultClassifier } from '../classify/classify.js';
import type { HealthCheckOptions } from '../recovery/recovery-options.interface.js';
import type { LimitAlgorithmName } from '../limit/limit-options.js';

/** The options of one breaker after defaults and validation, as `breaker.config` shows them. @publicApi */
export interface ResolvedBreakerOptions {
  readonly window: Readonly<Required<WindowOptions>>;
  /** Whether the failure/slow rates may trip the breaker (false in the consecutive-only model). */
  readonly rateRule: boolean;
  readonly failureRateThreshold: number;
  readonly minimumThroughput: number;
  readonly consecutiveFailures: number | undefined;
  readonly slowCallDurationMs: number | undefined;
  readonly slowCallRateThreshold: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly openDurationMs: number;
  readonly backoffMultiplier: number;
  readonly backoffMaxMs: number;
  readonly jitter: number;
  readonly maxRetryAfterMs: number;
  readonly maxProbes: number;
  readonly maxConcurrentProbes: number;
  readonly successesToClose: number;
  readonly probeTimeoutMs: number | undefined;
  readonly probeMaxWaitMs: number;
  /** The SRE K, or 0 when overload handling is off. */
  readonly overloadK: number;
  readonly classify: ErrorClassifier | undefined;
  readonly classifyResult: ResultClassifier | undefined;
  /** Set when the breaker is a per-key family. */
  readonly perKey:
    | {
        readonly maxKeys: number;
        readonly idleMs: number | undefined;
        readonly maxKeyLength: number;
      }
    | undefined;
  readonly aggregate: { readonly openWhenOpenRatio: number; readonly minKeys: number } | undefined;
  /** `false`: never shared; `undefined`: shared when the module has a store; otherwise shared with this quorum (`'auto'`: from the replicas that report). */
  readonly share: false | { readonly quorum: number | 'auto' } | undefined;

  /** A fixed cap (`maxConcurrent`), or an adaptive one (`algorithm` and its bounds). */
  readonly bulkhead:
    | {
        readonly maxConcurrent: number;
        readonly algorithm?: undefined;
        readonly maxQueue: number;
        readonly queueTimeoutMs: number;
      }
    | {
        readonly maxConcurrent?: undefined;
        readonly algorithm: Exclude<LimitAlgorithmName, 'fixed'>;
        readonly initialLimit: number;
        readonly minLimit: number;
        readonly maxLimit: number;
        readonly maxQueue: number;
        readonly queueTimeoutMs: number;
      }
    | undefined;
  readonly rampUp: { readonly durationMs: number; readonly initialRatio: number } | undefined;
  readonly healthCheck:
    | {
        readonly fn: HealthCheckOptions['fn'];
        readonly intervalMs: number;
        readonly timeoutMs: number;
        readonly onSuccess: 'half-open' | 'closed';
      }
    | undefined;
}
