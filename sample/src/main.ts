import { CircuitBreakerRegistry, circuitBreakerOptionsFromEnv } from 'nestjs-circuit-breaker';
import { startSample } from './bootstrap.js';
import { sampleBreakerOptions } from './breakers/circuit-breaker.config.js';
import { BREAKERS } from './sample.config.js';

// `npm run sample`: the sample on http://127.0.0.1:3000 for exploration with curl (see the README).
const sample = await startSample({ port: Number(process.env.PORT ?? 3000) });
const { primary, warehouses } = sample.upstreams;
console.log(`
Sample listening on ${sample.url} (and over TCP on port ${sample.rpcPort}: pattern 'checkout.quote')
  dashboard: ${sample.dashboardUrl}  (live, with force and reset buttons; this machine only)
  upstreams: primary ${primary.url}, warehouse a ${warehouses.a.url}, warehouse b ${warehouses.b.url}

Try:
  curl ${sample.url}/catalog/products/1
  curl -X POST ${primary.url}/__behaviour -H 'content-type: application/json' -d '{"mode":"failing"}'
  curl ${sample.url}/catalog/products/1          # repeat: the last good answer, then the breaker opens
  curl -i ${sample.url}/checkout/1               # @RequireCircuitBreaker: 503 + Retry-After before any work
  curl -i ${sample.url}/health/ready             # 503 while a breaker is open
  curl ${sample.url}/breakers                    # every breaker's snapshot
  curl ${sample.url}/metrics                     # Prometheus

A game day (start with GAME_DAY=true): failures made up by the breaker, the catalog untouched
  curl -X POST ${sample.url}/breakers/catalog/faults -H 'content-type: application/json' -d '{"fail":true,"rate":0.5}'
  curl -X DELETE ${sample.url}/breakers/catalog/faults
`);
const stop = async () => {
  await sample.close();
  process.exit(0);
};
// `kill -HUP <pid>` after changing CB_* variables (a mounted .env, a ConfigMap): breakers are reconfigured in place,
// keeping their state; one invalid variable refuses the whole reload and changes nothing.
process.on('SIGHUP', () => {
  try {
    const { defaults, breakers } = sampleBreakerOptions(
      circuitBreakerOptionsFromEnv({ breakers: Object.keys(BREAKERS) }),
    );
    const result = sample.app.get(CircuitBreakerRegistry).reload({ defaults, breakers });
    console.log(`Reloaded breaker options: ${JSON.stringify(result)}`);
  } catch (error) {
    console.error(`Breaker options not reloaded: ${(error as Error).message}`);
  }
});
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
