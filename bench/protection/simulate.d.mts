// Types of the simulator for the protection tests (test/protection/), which are TypeScript.

export interface Condition {
  mode?: 'healthy' | 'down' | 'hung' | 'shedding';
  capacity?: number;
  latency?: number;
  addedMs?: number;
  failRate?: number;
  maxQueue?: number;
  retryAfterMs?: number;
}

export interface Scenario {
  name: string;
  rate: number;
  clientTimeoutMs: number;
  clientTimeout: 'abort' | 'race';
  incidentAtMs: number;
  healthyAtMs: number;
  durationMs: number;
  retries?: number;
  /** Several hosts, each behind its own key, with failover past a breaker's rejection. */
  hosts?: number;
  /** Several replicas calling the one dependency, each with its own instance. */
  replicas?: number;
  dependency: { slots?: number; serviceMs?: number; contention?: number; maxQueue?: number };
  phases: { atMs: number; host?: number; condition: Condition }[];
}

export interface Implementation {
  name: string;
  label: string;
  make(context: unknown): {
    call(fn: (signal?: AbortSignal) => Promise<unknown>): Promise<unknown>;
  };
  makeKeyed?(
    context: unknown,
    keys: number,
  ): {
    call(fn: (signal?: AbortSignal) => Promise<unknown>, key: number): Promise<unknown>;
  };
}

export interface Figures {
  wasted: number;
  peakInFlight: number;
  waitingS: number;
  detectMs: number | undefined;
  recoverMs: number | undefined;
  goodput: number;
  baselineGoodput: number;
  p50Ms: number;
  p99Ms: number;
  amplification: number;
  requests: number;
  series: { bucketMs: number; arrivals: number[]; successes: number[]; depCalls: number[] };
}

export const BUCKET_MS: number;
export function simulate(
  scenario: Scenario,
  implementation: Implementation,
  options?: { seed?: number },
): Promise<Figures>;
