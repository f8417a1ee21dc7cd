import type { Implementation, Scenario } from './simulate.mjs';

export interface Section {
  title: string;
  runs: Scenario[];
  rows: Implementation[];
}

export function protectionPlan(options: {
  quick: boolean;
  peers: Record<string, Implementation>;
  ours: Partial<Record<string, Implementation>>;
}): Section[];
