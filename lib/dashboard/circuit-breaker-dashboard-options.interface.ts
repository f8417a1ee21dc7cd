import type {
  CanActivate,
  ExecutionContext,
  InjectionToken,
  ModuleMetadata,
  OptionalFactoryDependency,
  Type,
} from '@nestjs/common';
import type { Observable } from 'rxjs';

/**
 * Who may see the dashboard (and, with `control`, use it): a Nest guard class
 * (built by Nest, so its dependencies must be global or the guard given as an
 * instance), a guard instance, or a function of the request's context.
 *
 * @publicApi
 */
export type CircuitBreakerDashboardGuard =
  | Type<CanActivate>
  | CanActivate
  | ((context: ExecutionContext) => boolean | Promise<boolean> | Observable<boolean>);

/**
 * Options of `CircuitBreakerDashboardModule.forRoot()`.
 *
 * @publicApi
 */
export interface CircuitBreakerDashboardOptions {
  /** Where the page is served; its stream is `<path>/stream`, its JSON `<path>/state`. Default `'circuit-breakers'` (under the application's global prefix, if any). */
  path?: string;
  /** `false` serves nothing at all (no route), e.g. `enabled: process.env.DASHBOARD === 'on'`. Default `true`. */
  enabled?: boolean;
  /**
   * Who may see the page, its stream and its controls. It runs after the
   * application's global guards, which protect the dashboard as they protect
   * every route. Without one, anyone who reaches the port sees every breaker:
   * never expose the dashboard on a public listener.
   */
  guard?: CircuitBreakerDashboardGuard;
  /**
   * Buttons that force a breaker open or closed and reset it (POST requests
   * that carry the page's token, refused from another origin). Default
   * `false`: no control route exists. Needs `guard`.
   */
  control?: boolean;
  /** How often every breaker's snapshot is pushed to the open pages, in ms; transitions are pushed as they happen. Default 1,000, at least 100. */
  intervalMs?: number;
  /** Most streams open at once (pages and tabs); one more is answered 503. Default 20. */
  maxStreams?: number;
  /**
   * Characters of events that may wait for a page that does not read them
   * before its connection is dropped (it reconnects by itself once it reads
   * again). Default 1,048,576.
   */
  maxPendingDataLength?: number;
  /** Children of a per-key family shown on its tile, worst state first (as its badge), then the rate they opened on or fail at. Default 5. */
  topChildren?: number;
  /**
   * Host names the dashboard also answers to, besides `localhost`,
   * `127.x.x.x`, `[::1]` and the address it is served on (with the port it is
   * served on): the name behind which a reverse proxy serves it, a port
   * mapping. `'ops.example.com'` (any port), `'ops.example.com:8443'` (that
   * port), `'.example.com'` (the domain and its subdomains). A request of any
   * other `Host` is refused (403), as is a control request whose `Origin` is
   * neither its `Host` nor listed here. Checked at start-up; there is no
   * wildcard. Default none.
   */
  allowedHosts?: string[];
}

/**
 * What `useFactory` of `forRootAsync()` returns: every option but those that
 * shape the routes, which exist before it runs.
 *
 * @publicApi
 */
export type CircuitBreakerDashboardFactoryOptions = Omit<
  CircuitBreakerDashboardOptions,
  'path' | 'control' | 'maxPendingDataLength'
>;

/**
 * Options of `CircuitBreakerDashboardModule.forRootAsync()`: `path`,
 * `control` and `maxPendingDataLength` here (they shape the routes), the rest
 * from `useFactory`, e.g. from `ConfigService`. With `enabled: false` from the
 * factory, the routes answer 404.
 *
 * @publicApi
 */
export interface CircuitBreakerDashboardAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  path?: string;
  control?: boolean;
  maxPendingDataLength?: number;
  inject?: (InjectionToken | OptionalFactoryDependency)[];
  useFactory: (
    ...args: any[]
  ) => CircuitBreakerDashboardFactoryOptions | Promise<CircuitBreakerDashboardFactoryOptions>;
}
