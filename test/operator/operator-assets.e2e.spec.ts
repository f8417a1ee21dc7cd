import { Controller, Get, Header, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  type BreakerStore,
} from '../../lib/index.js';
import { CircuitBreakerMetricsModule } from '../../lib/prometheus/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

/**
 * The operator assets shipped in `operator/`: the alert rules pass
 * `promtool check rules` and their own `promtool test rules`, every query of
 * the Grafana dashboard parses as PromQL, and every metric and label they
 * name exists in what the Prometheus integration really exposes, scraped over
 * HTTP from a running application. `.ci/run` sets REQUIRE_PROMTOOL=1, which
 * turns a missing promtool into a failure; elsewhere those tests are skipped
 * with one line.
 */
const operator = (file: string) =>
  fileURLToPath(new URL(`../../operator/${file}`, import.meta.url));
const RULES = operator('prometheus-alerts.yml');
const dashboard = JSON.parse(readFileSync(operator('grafana-dashboard.json'), 'utf8')) as Dashboard;

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const hasPromtool = promtool.status === 0;
if (!hasPromtool) {
  if (process.env.REQUIRE_PROMTOOL === '1')
    throw new Error('REQUIRE_PROMTOOL=1 but promtool is not on PATH: apt-get install prometheus');
  console.warn(
    'promtool checks of operator/ skipped: promtool is not on PATH (apt-get install prometheus)',
  );
}
const run = (...args: string[]) =>
  spawnSync('promtool', args, { encoding: 'utf8', cwd: operator('') });

interface Panel {
  type: string;
  title: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}
interface Dashboard {
  panels: Panel[];
  templating: { list: { name: string; query?: string | { query: string } }[] };
  annotations: { list: { expr?: string }[] };
}

/** Every PromQL expression of the dashboard, Grafana's variables given values; `label_values()` reduced to its selector. */
function dashboardQueries(): string[] {
  const queries: string[] = [];
  const walk = (panels: Panel[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) if (target.expr) queries.push(target.expr);
      walk(panel.panels ?? []);
    }
  };
  walk(dashboard.panels);
  for (const annotation of dashboard.annotations.list)
    if (annotation.expr) queries.push(annotation.expr);
  for (const variable of dashboard.templating.list) {
    const query = typeof variable.query === 'object' ? variable.query.query : undefined;
    const selector =
      query === undefined ? undefined : /^label_values\((.+), *\w+\)$/.exec(query)?.[1];
    if (selector !== undefined) queries.push(selector);
  }
  return queries.map((query) =>
    query.replaceAll('$__rate_interval', '1m').replaceAll('$job', '.*').replaceAll('$name', '.*'),
  );
}

/** Every `expr` of the rules file (the YAML is ours: `expr:` on one line, or a `|` block). */
function ruleQueries(): string[] {
  const lines = readFileSync(RULES, 'utf8').split('\n');
  const queries: string[] = [];
  lines.forEach((line, i) => {
    const match = /^(\s*)expr: ?(.*)$/.exec(line);
    if (match === null) return;
    if (match[2] !== '|') return void queries.push(match[2]!);
    const block: string[] = [];
    for (
      let j = i + 1;
      j < lines.length && (lines[j]!.trim() === '' || lines[j]!.startsWith(`${match[1]}  `));
      j++
    )
      block.push(lines[j]!.trim());
    queries.push(block.join(' ').trim());
  });
  return queries;
}

describe.skipIf(!hasPromtool)('the alert rules and the dashboard, checked by promtool', () => {
  it('promtool check rules passes on the alert rules', () => {
    const result = run('check', 'rules', RULES);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('SUCCESS: 10 rules found');
    expect(result.status).toBe(0);
  });

  it('the rules fire as their unit tests say (promtool test rules)', () => {
    const result = run('test', 'rules', operator('prometheus-alerts.test.yml'));
    expect(result.stdout + result.stderr).toContain('SUCCESS');
    expect(result.status).toBe(0);
  });

  it('every query of the Grafana dashboard parses as PromQL', () => {
    const queries = dashboardQueries();
    expect(queries.length).toBe(19);
    const dir = mkdtempSync(join(tmpdir(), 'cb-dashboard-queries-'));
    try {
      const file = join(dir, 'queries.yml');
      const rules = queries.map(
        (query, i) =>
          `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(query)}`,
      );
      writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`);
      const result = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      expect(result.stdout + result.stderr).toContain(`SUCCESS: ${queries.length} rules found`);
      expect(result.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('every metric and label the dashboard and the rules use, in a real scrape', () => {
  let app: INestApplication;
  let exposition: Map<string, Set<string>>;

  beforeAll(async () => {
    const registry = new Registry();
    @Controller('metrics')
    class MetricsController {
      @Get()
      @Header('content-type', registry.contentType)
      metrics(): Promise<string> {
        return registry.metrics();
      }
    }
    const store: BreakerStore = {
      coordinator: {
        transitioned: () => undefined,
        mayProbe: () => true,
        coordinationOf: () => ({ shared: true, storeErrors: 0 }),
      },
      hydrate: async () => undefined,
      close: async () => undefined,
    };
    const clock = new ManualClock();
    const moduleRef = await Test.createTestingModule({
      imports: [
        CircuitBreakerModule.forRoot({
          clock,
          store,
          breakers: {
            payments: { consecutiveFailures: 1, openDurationMs: 1_000, share: true },
            pricing: { share: false },
            tenants: { perKey: { maxKeys: 10 }, consecutiveFailures: 1, share: false },
          },
        }),
        CircuitBreakerMetricsModule.forRoot({ registry }),
      ],
      controllers: [MetricsController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    // Every kind of series: a success, a failure that opens, a rejection, a fallback, a probe that closes, a force, a tenant's outage, a reconfiguration.
    const breakers = app.get(CircuitBreakerRegistry);
    const payments = breakers.get('payments');
    await payments.execute(() => Promise.resolve(1));
    await payments.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    await payments.execute(() => Promise.resolve(1)).catch(() => undefined);
    payments.recordFallback(new Error('down'), 'function');
    clock.advance(1_000);
    await payments.execute(() => Promise.resolve(1));
    breakers.get('pricing').force('open', { reason: 'maintenance' });
    await breakers
      .get('tenants')
      .forKey('acme')
      .execute(() => Promise.reject(new Error('down')))
      .catch(() => undefined);
    await breakers.control('payments').reconfigure({ openDurationMs: 2_000 });
    const response = await fetch(`${await app.getUrl()}/metrics`.replace('[::1]', '127.0.0.1'));
    exposition = parseExposition(await response.text());
  });
  afterAll(async () => {
    await app?.close();
  });

  it('the scrape has the series the assets need', () => {
    expect(new Set(exposition.keys())).toEqual(
      new Set([
        'circuit_breaker_call_duration_seconds_bucket',
        'circuit_breaker_call_duration_seconds_count',
        'circuit_breaker_call_duration_seconds_sum',
        'circuit_breaker_calls_total',
        'circuit_breaker_config_generation',
        'circuit_breaker_config_info',
        'circuit_breaker_fallbacks_total',
        'circuit_breaker_forced',
        'circuit_breaker_keys',
        'circuit_breaker_probes_total',
        'circuit_breaker_shared',
        'circuit_breaker_state',
        'circuit_breaker_transitions_total',
        'circuit_breaker_window_calls',
        'circuit_breaker_window_failure_rate',
      ]),
    );
  });

  it.each([
    [
      'the Grafana dashboard',
      dashboardQueries,
      [
        'circuit_breaker_call_duration_seconds_bucket',
        'circuit_breaker_calls_total',
        'circuit_breaker_config_generation',
        'circuit_breaker_fallbacks_total',
        'circuit_breaker_forced',
        'circuit_breaker_probes_total',
        'circuit_breaker_shared',
        'circuit_breaker_state',
        'circuit_breaker_transitions_total',
        'circuit_breaker_window_calls',
        'circuit_breaker_window_failure_rate',
      ],
    ],
    [
      'the alert rules',
      ruleQueries,
      [
        'circuit_breaker_calls_total',
        'circuit_breaker_fallbacks_total',
        'circuit_breaker_forced',
        'circuit_breaker_keys',
        'circuit_breaker_shared',
        'circuit_breaker_state',
      ],
    ],
  ])('%s names only metrics and labels the integration exposes', (_, queries, expected) => {
    const problems: string[] = [];
    const used = new Set<string>();
    for (const query of queries()) {
      for (const [, metric, labels] of query.matchAll(
        /\b(circuit_breaker_[a-z_]+)\b(?:\{([^}]*)\})?/g,
      )) {
        used.add(metric!);
        const known = exposition.get(metric!);
        if (known === undefined) {
          problems.push(`${metric} (in ${query}) is not in the scrape`);
          continue;
        }
        for (const [, label] of (labels ?? '').matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g))
          if (!known.has(label!) && !TARGET_LABELS.includes(label!))
            problems.push(`${metric} has no label ${label} (in ${query})`);
      }
      // Labels of aggregations: the metrics' own, plus those Prometheus adds at scrape time.
      const all = new Set([
        'job',
        'instance',
        ...[...exposition.values()].flatMap((set) => [...set]),
      ]);
      for (const [, list] of query.matchAll(/\b(?:by|ignoring|on)\s*\(([^)]*)\)/g))
        for (const label of list!
          .split(',')
          .map((l) => l.trim())
          .filter(Boolean))
          if (!all.has(label)) problems.push(`no metric has the label ${label} (in ${query})`);
    }
    expect(problems).toEqual([]);
    expect(used).toEqual(new Set(expected));
  });
});

/** The labels Prometheus adds to every series it scrapes. */
const TARGET_LABELS = ['job', 'instance'];

/** Metric name → its label names, from the sample lines of a text exposition. */
function parseExposition(text: string): Map<string, Set<string>> {
  const metrics = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? /.exec(line);
    if (match === null) continue;
    const labels = metrics.get(match[1]!) ?? new Set<string>();
    for (const [, label] of (match[2] ?? '').matchAll(/(\w+)="/g)) labels.add(label!);
    metrics.set(match[1]!, labels);
  }
  return metrics;
}
