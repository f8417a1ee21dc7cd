import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { CircuitBreakerRegistry, type CircuitBreakerEvent } from 'nestjs-circuit-breaker';
import { firstValueFrom } from 'rxjs';
import { startSample, type RunningSample } from './src/bootstrap.js';
import type { UpstreamServer } from './src/upstream/upstream.server.js';

/**
 * `npm run demo`: starts the sample and its fake upstreams, drives a scripted
 * outage through them over real HTTP, and prints a timeline of what every
 * breaker did. Exits 0 when every phase behaved as expected, so it doubles as
 * a smoke test.
 */

const colour = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
const paint = (code: number) => (text: string) =>
  colour ? `\u001b[${code}m${text}\u001b[0m` : text;
const bold = paint(1);
const dim = paint(2);
const red = paint(31);
const green = paint(32);
const yellow = paint(33);
const cyan = paint(36);

const started = Date.now();
const stamp = () => dim(`[${((Date.now() - started) / 1000).toFixed(2).padStart(6)}s]`);
const line = (text: string) => console.log(`${stamp()} ${text}`);
const stateColour = (state: string) =>
  state === 'closed' ? green(state) : state === 'half-open' ? yellow(state) : red(state);
const statusColour = (status: number) =>
  status < 300
    ? green(String(status))
    : status < 500
      ? yellow(String(status))
      : red(String(status));

let failures = 0;
function check(ok: boolean, description: string): void {
  if (!ok) failures++;
  console.log(`           ${ok ? green('✔') : red('✘')} ${description}`);
}

function describeEvent(event: CircuitBreakerEvent): string | undefined {
  const who = cyan(
    (event.key === undefined ? event.breaker : `${event.breaker}[${event.key}]`).padEnd(16),
  );
  switch (event.type) {
    case 'stateChange':
      return `${who} ${stateColour(event.payload.from)} → ${stateColour(event.payload.to)} ${dim(`(${event.payload.reason})`)}`;
    case 'rejected':
      return `${who} rejected locally ${dim(`(${event.payload.reason}, retry in ${event.payload.error.retryAfterMs ?? '?'} ms)`)}`;
    case 'fallback':
      return `${who} served by fallback ${dim(`(${event.payload.source})`)}`;
    case 'timeout':
      return `${who} ${red('timed out')} ${dim(`after ${event.payload.timeoutMs} ms; its request was aborted`)}`;
    case 'failure':
      return event.payload.category === 'overload'
        ? `${who} ${yellow('overloaded')} ${dim('(429: back off, do not stop)')}`
        : undefined;
    default:
      return undefined;
  }
}

async function get(
  sample: RunningSample,
  path: string,
): Promise<{ status: number; retryAfter: string | null; body: unknown }> {
  const t0 = Date.now();
  const response = await fetch(`${sample.url}${path}`);
  const body = await response.json().catch(() => undefined);
  const retryAfter = response.headers.get('retry-after');
  line(
    `GET ${path.padEnd(24)} → ${statusColour(response.status)} ${dim(`${Date.now() - t0} ms`)}${retryAfter ? dim(` Retry-After: ${retryAfter}`) : ''}`,
  );
  return { status: response.status, retryAfter, body };
}

/** A request over the sample's TCP microservice: what it answered, or the error payload it sent. */
async function rpc(
  client: ClientProxy,
  pattern: string,
  data: unknown,
): Promise<{ value?: unknown; error?: unknown }> {
  const t0 = Date.now();
  const answer = await firstValueFrom(client.send(pattern, data)).then(
    (value: unknown): { value?: unknown; error?: unknown } => ({ value }),
    (error: unknown) => ({ error }),
  );
  const code = (answer.error as { code?: string } | undefined)?.code;
  line(
    `TCP ${pattern.padEnd(24)} → ${answer.error === undefined ? green('ok') : red(code ?? 'error')} ${dim(`${Date.now() - t0} ms`)}`,
  );
  return answer;
}

async function readiness(sample: RunningSample): Promise<number> {
  const response = await fetch(`${sample.url}/health/ready`);
  await response.arrayBuffer();
  line(`${bold('/health/ready')} → ${statusColour(response.status)}`);
  return response.status;
}

function phase(title: string): void {
  console.log(`\n${bold(`── ${title} `.padEnd(72, '─'))}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function hits(upstream: UpstreamServer, run: () => Promise<unknown>): Promise<number> {
  const before = upstream.requests;
  await run();
  return upstream.requests - before;
}

async function main(): Promise<void> {
  const sample = await startSample({ logger: ['error'] });
  const registry = sample.app.get(CircuitBreakerRegistry);
  const subscription = registry.events$.subscribe((event) => {
    const text = describeEvent(event);
    if (text !== undefined) line(text);
  });
  const { primary, warehouses } = sample.upstreams;
  const state = (name: string) => registry.get(name).state;
  const client = ClientProxyFactory.create({
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port: sample.rpcPort },
  });
  console.log(
    bold(`nestjs-circuit-breaker demo: the sample on ${sample.url}, its upstreams on loopback`),
  );
  console.log(
    dim(
      `live dashboard of this run: ${sample.dashboardUrl} (npm run sample keeps it up for exploration)`,
    ),
  );

  try {
    phase('1. healthy upstreams');
    const healthy = [
      await get(sample, '/catalog/products/1'),
      await get(sample, '/catalog/products/2'),
      await get(sample, '/catalog/products/3'),
    ];
    healthy.push(
      await get(sample, '/pricing/1'),
      await get(sample, '/inventory/a/42'),
      await get(sample, '/inventory/b/42'),
    );
    check(
      healthy.every((r) => r.status === 200),
      'every call answered 200',
    );
    check((await readiness(sample)) === 200, 'ready: 200');
    const dashboard = await fetch(`${sample.dashboardUrl}/state`);
    const tiles = ((await dashboard.json()) as { breakers: unknown[] }).breakers.length;
    check(
      dashboard.status === 200 && tiles === 4,
      `the dashboard's state lists the ${tiles} breakers (its page: ${sample.dashboardUrl})`,
    );

    phase('2. the catalog fails (500): the breaker opens and calls fail fast');
    primary.setBehaviour({ mode: 'failing' });
    const during: number[] = [];
    const reached = await hits(primary, async () => {
      for (let i = 0; i < 6; i++) during.push((await get(sample, '/catalog/products/1')).status);
    });
    check(
      state('catalog') === 'open',
      `catalog is ${state('catalog')} after 3 failures in a window of 6 calls (50%)`,
    );
    check(
      reached === 3,
      `only ${reached} of 6 calls reached the upstream; the rest were rejected in microseconds`,
    );
    check(
      during.every((s) => s === 200),
      'every caller still got product 1: the last good answer (lastGood fallback, fresh for 60 s)',
    );
    const uncached = await get(sample, '/catalog/products/9');
    check(
      uncached.status === 503 && uncached.retryAfter !== null,
      'a product never seen before gets 503 with Retry-After: no stale answer to serve',
    );
    let checkout: Awaited<ReturnType<typeof get>> | undefined;
    const checkoutHits = await hits(primary, async () => {
      checkout = await get(sample, '/checkout/1');
    });
    check(
      checkout?.status === 503 && checkout.retryAfter !== null && checkoutHits === 0,
      '@RequireCircuitBreaker: the checkout fan-out answered 503 + Retry-After before any work, 0 upstream calls',
    );
    const rejectedRpc = await rpc(client, 'checkout.quote', '1');
    const payload = rejectedRpc.error as { code?: string; retryAfterMs?: number } | undefined;
    check(
      payload?.code === 'CIRCUIT_OPEN' && typeof payload.retryAfterMs === 'number',
      `over TCP the client gets { code: 'CIRCUIT_OPEN', retryAfterMs: ${payload?.retryAfterMs} }`,
    );
    check((await readiness(sample)) === 503, 'ready: 503, this replica leaves the load balancer');

    phase('3. the catalog recovers: after the open duration one probe closes the breaker');
    primary.setBehaviour({ mode: 'healthy' });
    const wait = registry.get('catalog').snapshot().retryAfterMs ?? 0;
    line(dim(`waiting ${wait} ms for the open duration (2 s ± 10% jitter) to pass...`));
    await sleep(wait + 20);
    check(state('catalog') === 'half-open', 'catalog is half-open: it admits one probe');
    const probe = await get(sample, '/catalog/products/2');
    check(
      probe.status === 200 && state('catalog') === 'closed',
      'the probe succeeded and the catalog is closed again',
    );
    check((await readiness(sample)) === 200, 'ready: 200');

    phase('3b. slow start: the recovered catalog gets a growing share of the traffic');
    const ramped: { status: number; retryAfter: string | null }[] = [];
    // Products that do not exist (404 is an answer, not a failure), so no last good answer hides a rejection.
    const rampHits = await hits(primary, async () => {
      for (let id = 10; id < 18; id++) ramped.push(await get(sample, `/catalog/products/${id}`));
    });
    const turnedAway = ramped.filter((r) => r.status === 503 && r.retryAfter !== null).length;
    check(
      rampHits >= 2 && rampHits <= 4 && rampHits + turnedAway === ramped.length,
      `${rampHits} of 8 calls reached the catalog (its 404: unknown product), from 25% upwards; ${turnedAway} got 503 with Retry-After (reason ramp-up)`,
    );
    check(state('catalog') === 'closed', 'the catalog stays closed: a slow start is not an outage');
    const rampLeft = registry.get('catalog').snapshot().rampUp;
    await sleep(Math.max(0, (rampLeft?.until ?? Date.now()) - Date.now()) + 20);
    const full = await hits(primary, async () => {
      for (let id = 18; id < 22; id++) await get(sample, `/catalog/products/${id}`);
    });
    check(full === 4, 'once the ramp is over (1.5 s), every call reaches the catalog again');
    // After the ramp, so that the slow start turns none of its calls away.
    const quote = await get(sample, '/checkout/1');
    const rpcQuote = await rpc(client, 'checkout.quote', '1');
    check(
      quote.status === 200 && rpcQuote.error === undefined,
      'the checkout answers again, over HTTP and over the TCP microservice transport (one controller, two transports)',
    );

    phase('4. pricing is overloaded (429 + Retry-After: 2): back off, do not open');
    primary.setBehaviour({ mode: 'overloaded', retryAfterSeconds: 2 });
    const overloaded: { status: number; retryAfter: string | null }[] = [];
    const pricingHits = await hits(primary, async () => {
      for (let i = 0; i < 3; i++) overloaded.push(await get(sample, '/pricing/1'));
    });
    check(overloaded[0]?.status === 429, 'the first call reached pricing and got its 429');
    check(
      overloaded.slice(1).every((r) => r.status === 503 && r.retryAfter === '2'),
      'the next calls waited locally: 503 with Retry-After: 2, as pricing asked',
    );
    check(
      pricingHits === 1 && state('pricing') === 'closed',
      'pricing received 1 call and its breaker stays closed: overload is not breakage',
    );
    check((await readiness(sample)) === 200, 'ready: 200');
    primary.setBehaviour({ mode: 'healthy' });

    phase('5. warehouse a hangs: the deadline cuts it, warehouse b is untouched');
    // fetch goes through an undici dispatcher with the inventory family: one child per origin.
    line(dim(`warehouse a is ${warehouses.a.url}, warehouse b ${warehouses.b.url}: a child each`));
    warehouses.a.setBehaviour({ mode: 'hanging' });
    const hung = [await get(sample, '/inventory/a/42'), await get(sample, '/inventory/a/42')];
    const refusedHits = await hits(warehouses.a, async () => {
      hung.push(await get(sample, '/inventory/a/42'));
    });
    check(
      hung[0]?.status === 504 && hung[1]?.status === 504,
      'two calls to warehouse a were cut at 800 ms: 504 Gateway Timeout',
    );
    check(
      hung[2]?.status === 503 &&
        refusedHits === 0 &&
        registry.get('inventory').forKey(warehouses.a.url).state === 'open',
      "then warehouse a's child opened: the third call failed fast with 503, and never reached it",
    );
    check(
      (await get(sample, '/inventory/b/42')).status === 200,
      'warehouse b still answers 200: one breaker per target',
    );
    const family = registry.get('inventory').snapshot();
    check(
      family.state === 'closed' && family.family?.unhealthyKeys === 1,
      'the inventory family stays closed with 1 unhealthy key of 2',
    );
    check(
      (await readiness(sample)) === 200,
      'ready: 200, a per-target outage does not take the replica out',
    );

    phase('6. what Prometheus scrapes from /metrics');
    const scrape = await (await fetch(`${sample.url}/metrics`)).text();
    const shown = scrape
      .split('\n')
      .filter(
        (l) =>
          /^circuit_breaker_(calls_total|fallbacks_total|transitions_total|state)\{name="catalog"/.test(
            l,
          ) && !l.endsWith(' 0'),
      );
    for (const metric of shown) console.log(`           ${dim(metric)}`);
    const value = (series: string) =>
      Number(
        scrape
          .split('\n')
          .find((l) => l.startsWith(series))
          ?.split(' ')
          .pop(),
      );
    check(
      value('circuit_breaker_calls_total{name="catalog",outcome="rejected",reason="open"}') === 4,
      'catalog: 4 rejections counted apart from the 3 remote failures',
    );
    check(
      value('circuit_breaker_calls_total{name="catalog",outcome="failure",reason=""}') === 3,
      'catalog: 3 remote failures',
    );
    check(
      value('circuit_breaker_fallbacks_total{name="catalog",source="lastGood"}') === 6 &&
        !scrape.includes('outcome="fallback"'),
      'catalog: the 6 calls answered with the last good answer are counted apart, not as calls a second time',
    );
    check(
      value('circuit_breaker_transitions_total{name="catalog",from="closed",to="open"}') === 1,
      'catalog: one closed → open transition',
    );
    check(
      value('circuit_breaker_state{name="catalog",state="closed"}') === 1,
      'catalog: state gauge says closed again',
    );
  } finally {
    subscription.unsubscribe();
    await client.close();
    await sample.close();
  }

  console.log(
    `\n${failures === 0 ? green(bold('Every phase behaved as expected.')) : red(bold(`${failures} check(s) failed.`))}`,
  );
  process.exitCode = failures === 0 ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(red('The demo crashed:'), error);
  process.exitCode = 1;
});
