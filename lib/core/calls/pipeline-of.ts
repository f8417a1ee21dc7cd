import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import { familyGateStage } from '../family/family-gate-stage.js';
import { overflowStage } from '../family/overflow-stage.js';
import { faultStage } from '../faults/fault-stage.js';
import { adaptiveBulkheadStage, bulkheadStage } from '../overload/bulkhead-stage.js';
import { rampUpStage } from '../overload/ramp-up-stage.js';
import { admitCall } from './admit-call.js';
import { assemble, type Admit, type Stage } from './call-pipeline.js';

// One pipeline per configuration (and per fault-injection setting): a family's children share their family's.
const withoutFaults = new WeakMap<ResolvedBreakerOptions, Admit>();
const withFaults = new WeakMap<ResolvedBreakerOptions, Admit>();

/**
 * The pipeline of every call of a breaker with `config`, assembled once from
 * the stages the configuration uses, outermost first: a family's overflow
 * count, the slow start, the bulkhead, the family's gate, fault injection,
 * then the state's admission and what the call runs in (its deadline,
 * classification and settlement). Forced modes are states of their own,
 * decided by the admission like any other. A breaker with none of these
 * options runs the admission alone. @internal
 */
export function pipelineOf(config: ResolvedBreakerOptions, faultInjection: boolean): Admit {
  const cache = faultInjection ? withFaults : withoutFaults;
  let admit = cache.get(config);
  if (admit !== undefined) return admit;
  const stages = stagesOf(config, faultInjection);
  // Most breakers use no stage: their pipeline is the admission alone, and nothing is cached for their options.
  if (stages.length === 0) return admitCall;
  admit = assemble({ stages, last: admitCall });
  cache.set(config, admit);
  return admit;
}

/** The stages `config` uses, outermost first. @internal */
export function stagesOf(config: ResolvedBreakerOptions, faultInjection: boolean): Stage[] {
  const stages: Stage[] = [];
  if (config.perKey !== undefined && config.bulkhead !== undefined) stages.push(overflowStage);
  if (config.rampUp !== undefined) stages.push(rampUpStage);
  if (config.bulkhead !== undefined)
    stages.push(config.bulkhead.algorithm === undefined ? bulkheadStage : adaptiveBulkheadStage);
  if (config.perKey !== undefined) stages.push(familyGateStage);
  if (faultInjection) stages.push(faultStage);
  return stages;
}
