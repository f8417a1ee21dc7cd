import { CRITICALITIES, type Criticality as Level } from '../core/index.js';
import { setCriticality } from '../concurrency-limit-use.js';
import { OptionChecker } from '../core/options/option-checker.js';
import { decorationSite } from './decoration-site.js';

/**
 * How important a request is, most important first: `'critical-plus'`,
 * `'critical'` (the default), `'sheddable-plus'`, `'sheddable'` (Google
 * SRE's four levels). Under pressure a limiter sheds the least important first.
 *
 * @publicApi
 */
export type Criticality = Level;

/**
 * The criticality of a handler's requests (on a method), or of every handler
 * of a class (a method's own wins), for `ConcurrencyLimitInterceptor`. The
 * module's `criticalityOf` and `criticalityHeader` come first, when they
 * answer.
 *
 * @publicApi
 */
export function Criticality(criticality: Criticality): ClassDecorator & MethodDecorator {
  return ((target: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor) => {
    const site = decorationSite('@Criticality()', target, propertyKey);
    new OptionChecker(site).oneOf('criticality', criticality, CRITICALITIES, false);
    setCriticality(
      site,
      (descriptor === undefined ? target : descriptor.value) as object,
      criticality,
    );
    return descriptor;
  }) as ClassDecorator & MethodDecorator;
}
