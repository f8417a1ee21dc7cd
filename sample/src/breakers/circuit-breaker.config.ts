import { ConfigModule, ConfigService, registerAs } from '@nestjs/config';
import {
  circuitBreakerOptionsFromEnv,
  type CircuitBreakerEnvConfig,
  type CircuitBreakerModuleOptions,
} from 'nestjs-circuit-breaker';
import { BREAKER_DEFAULTS, BREAKERS } from '../sample.config.js';

/**
 * The `CB_<BREAKER>_<OPTION>` variables (`CB_CATALOG_TIMEOUT_MS=1500`,
 * `CB_DEFAULTS_OPEN_DURATION_MS=5000`) as a config namespace: read once
 * ConfigModule has loaded `.env` into the environment, and checked then. A
 * bad value or a mistyped variable fails start-up with the variable's name.
 */
export const circuitBreakerEnv = registerAs('circuitBreakers', (): CircuitBreakerEnvConfig =>
  circuitBreakerOptionsFromEnv({ breakers: Object.keys(BREAKERS) }),
);

/**
 * The sample's own options (sample.config.ts), with what the environment
 * overrides on top: an option a variable sets replaces the sample's value
 * (a window variable replaces the whole window).
 */
export function sampleBreakerOptions(
  fromEnv: CircuitBreakerEnvConfig,
): CircuitBreakerModuleOptions {
  const breakers = Object.fromEntries(
    Object.entries(BREAKERS).map(([name, own]) => [name, { ...own, ...fromEnv.breakers?.[name] }]),
  );
  return { defaults: { ...BREAKER_DEFAULTS, ...fromEnv.defaults }, breakers, strict: true };
}

/**
 * `forRootAsync()`'s options: the same object serves `CircuitBreakerModule`
 * in the application and `CircuitBreakerTestingModule` in its tests.
 */
export const CIRCUIT_BREAKER_ASYNC_OPTIONS = {
  imports: [ConfigModule.forFeature(circuitBreakerEnv)],
  inject: [ConfigService],
  useFactory: (config: ConfigService): CircuitBreakerModuleOptions => ({
    ...sampleBreakerOptions(config.getOrThrow<CircuitBreakerEnvConfig>('circuitBreakers')),
    // GAME_DAY=true allows POST /breakers/:name/faults (left out otherwise: the testing module turns it on).
    ...(config.get<string>('GAME_DAY') === 'true' ? { faultInjection: true } : {}),
  }),
  // CallRejectedError → 503 + Retry-After, CallTimeoutError → 504, with bodies that name no breaker;
  // over the TCP microservice, the CIRCUIT_OPEN / CALL_TIMEOUT payload.
  httpFilter: true,
};
