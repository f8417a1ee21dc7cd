import { Logger, type ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { CRITICALITIES, type Criticality } from './core/index.js';
import { isCriticality } from './core/limit/criticality.js';
import { CRITICALITY_METADATA } from './circuit-breaker.constants.js';
import { concurrencyLimitMessages } from './concurrency-limit.messages.js';
import { closestName } from './core/options/closest-name.js';
import type { CriticalityOptions } from './interfaces/concurrency-limit-options.interface.js';

const logger = new Logger('CircuitBreakerModule');

/**
 * The criticality of a request: the module's `criticalityOf`, then its
 * `criticalityHeader`, then the route's metadata (the method's, then the
 * class's), then `'critical'`. The first that answers wins: the function is
 * the application's own decision; the header carries the caller's, which
 * knows best how much this one request matters (the same route serves a user
 * and a prefetch); the metadata is the route's usual importance.
 *
 * @internal
 */
export function criticalityReader(
  options: CriticalityOptions,
  reflector: Reflector,
): (context: ExecutionContext) => Criticality {
  const header = options.criticalityHeader?.toLowerCase();
  const of = options.criticalityOf;
  let reported = false;
  let misnamed = false;
  return (context) => {
    if (of !== undefined) {
      try {
        const answer = of(context);
        if (isCriticality(answer)) return answer;
        // undefined is "no opinion"; anything else is a mistake, said once (never an error to the client).
        if (answer !== undefined && !misnamed) {
          misnamed = true;
          const suggestion =
            typeof answer === 'string' ? closestName(answer, CRITICALITIES) : undefined;
          logger.error(concurrencyLimitMessages.criticalityOfAnswered(answer, suggestion));
        }
      } catch (fault) {
        if (!reported) logger.error(concurrencyLimitMessages.criticalityOfThrew(fault));
        reported = true;
      }
    }
    if (header !== undefined) {
      const sent = headerOf(context, header);
      if (sent !== undefined) return sent;
    }
    return (
      reflector.getAllAndOverride<Criticality | undefined>(CRITICALITY_METADATA, [
        context.getHandler(),
        context.getClass(),
      ]) ?? 'critical'
    );
  };
}

/**
 * The criticality a request's header (HTTP) or metadata (gRPC) names, in any
 * case and around spaces; `undefined` when there is none or it names none of
 * the four (never an error to the client).
 */
function headerOf(context: ExecutionContext, header: string): Criticality | undefined {
  let value: unknown;
  try {
    if (context.getType() === 'http') {
      value = context.switchToHttp().getRequest<{ headers?: Record<string, unknown> }>().headers?.[
        header
      ];
    } else if (context.getType() === 'rpc') {
      const metadata = context.switchToRpc().getContext<{ get?: (key: string) => unknown }>();
      value = typeof metadata?.get === 'function' ? metadata.get(header) : undefined;
    }
  } catch {
    return undefined;
  }
  const first: unknown = Array.isArray(value) ? value[0] : value;
  if (typeof first !== 'string') return undefined;
  const named = first.trim().toLowerCase();
  return isCriticality(named) ? named : undefined;
}
