import type { Scenario } from './simulate.mjs';

export function hardOutage(lengthMs: number, afterMs?: number): Scenario;
export function hung(
  clientTimeout: 'abort' | 'race',
  lengthMs?: number,
  afterMs?: number,
): Scenario;
export function brownout(lengthMs?: number, afterMs?: number): Scenario;
export function slow(lengthMs?: number, afterMs?: number): Scenario;
export function reducedCapacity(reducedMs?: number, afterMs?: number): Scenario;
export function retryStorm(afterMs?: number): Scenario;
export function overloaded(lengthMs?: number, afterMs?: number): Scenario;
export function badHost(lengthMs?: number, afterMs?: number): Scenario;
export function fleetOutage(lengthMs?: number, afterMs?: number, replicas?: number): Scenario;
export const OUTAGE_SWEEP_MS: number[];
export const OUTAGE_SWEEP_QUICK_MS: number[];
