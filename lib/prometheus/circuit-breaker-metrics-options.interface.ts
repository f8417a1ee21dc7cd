import type { OpenMetricsContentType, PrometheusContentType, Registry } from 'prom-client';

/**
 * Options of `CircuitBreakerMetricsModule.forRoot()`.
 *
 * @publicApi
 */
export interface CircuitBreakerMetricsOptions {
  /**
   * Where the metrics are registered. Default: prom-client's global `register`,
   * the one `@willsoto/nestjs-prometheus` serves on `/metrics`.
   */
  registry?: Registry<PrometheusContentType> | Registry<OpenMetricsContentType>;
  /** Prepended to every metric name, e.g. `'myapp_'`. Default `''`. */
  prefix?: string;
  /**
   * Adds a `key` label with the target of each child of a per-key family
   * (`''` for plain breakers and for the family itself). Off by default: keys
   * often come from request data, and every key is a new series of every
   * metric. `perKey.maxKeys` bounds them: the series of a child are removed
   * when its family evicts it. Off, children are counted under their family's
   * name.
   */
  keyLabel?: boolean;
}
