import { CircuitBreakerEvents } from '../../lib/circuit-breaker.events.js';
import { CircuitBreakerOrchestrator } from '../../lib/circuit-breaker.orchestrator.js';
import { CircuitBreakerRegistry } from '../../lib/circuit-breaker.registry.js';
import type { CircuitBreakerModuleOptions } from '../../lib/interfaces/circuit-breaker-module-options.interface.js';

/**
 * A registry and its orchestrator wired by hand, as `CircuitBreakerModule`
 * wires them, without a Nest application: for specs of the registry itself.
 * The orchestrator's lifecycle hooks are the caller's to run.
 */
export function standaloneRegistry(options: CircuitBreakerModuleOptions = {}): {
  registry: CircuitBreakerRegistry;
  orchestrator: CircuitBreakerOrchestrator;
} {
  const events = new CircuitBreakerEvents();
  const registry = new CircuitBreakerRegistry(events);
  const orchestrator = new CircuitBreakerOrchestrator(options, registry, events);
  return { registry, orchestrator };
}
