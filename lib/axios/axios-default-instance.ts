import type { AxiosInstance } from 'axios';
import type { AxiosTarget } from './axios-circuit-breaker-options.interface.js';

/**
 * Whether `target` is axios' process-wide default instance (the `axios`
 * export, which plain `HttpModule` gives `HttpService`), or an `HttpService`
 * holding it. Told by what only that instance has, its `default` export
 * pointing at itself, so that a second copy of axios in the application (the
 * one @nestjs/axios resolves) is recognised as well as this package's.
 *
 * @internal
 */
export function isDefaultAxiosInstance(target: AxiosTarget): boolean {
  const instance: unknown =
    typeof target === 'object' && target !== null && 'axiosRef' in target
      ? target.axiosRef
      : target;
  return (
    typeof instance === 'function' &&
    (instance as Partial<AxiosInstance> & { default?: unknown }).default === instance
  );
}
