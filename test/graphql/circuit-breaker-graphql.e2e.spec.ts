import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import type { INestApplication } from '@nestjs/common';
import { UseFilters } from '@nestjs/common';
import { Field, GraphQLModule, Int, ObjectType, Query, Resolver } from '@nestjs/graphql';
import { Test } from '@nestjs/testing';
import { GraphQLError } from 'graphql';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Breaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  RequireCircuitBreaker,
  UseCircuitBreaker,
} from '../../lib/index.js';
import {
  CircuitBreakerGraphQLExceptionFilter,
  classifyGraphQLResult,
} from '../../lib/graphql/index.js';
import { CapturingLogger } from '../helpers/nest-app.js';

@ObjectType()
class Quote {
  @Field(() => Int)
  price!: number;
}

@Resolver()
class QuotesResolver {
  @Query(() => String)
  hello() {
    return 'world';
  }

  @Query(() => Quote, { nullable: true })
  @RequireCircuitBreaker('quotes')
  quote() {
    return { price: 42 };
  }

  @Query(() => Quote, { nullable: true })
  @UseCircuitBreaker('quotes')
  slowQuote() {
    // The quote service hangs: the breaker's deadline ends the call.
    return new Promise(() => undefined);
  }

  @Query(() => String, { nullable: true })
  invalid() {
    throw new GraphQLError('symbol is required', { extensions: { code: 'BAD_USER_INPUT' } });
  }

  @Query(() => String, { nullable: true })
  crash() {
    throw new Error('null pointer');
  }
}

/** The resolver with the subpath's filter bound, for an application without httpFilter. */
@Resolver()
@UseFilters(new CircuitBreakerGraphQLExceptionFilter())
class FilteredResolver {
  @Query(() => Quote, { nullable: true })
  @RequireCircuitBreaker('quotes')
  filteredQuote() {
    return { price: 42 };
  }
}

const apps: INestApplication[] = [];
afterEach(async () => {
  while (apps.length > 0) await apps.pop()!.close();
});

async function server(httpFilter: boolean) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      CircuitBreakerModule.forRoot({
        httpFilter,
        breakers: { quotes: { consecutiveFailures: 1, openDurationMs: 30_000, timeoutMs: 50 } },
      }),
      // Code-first, with the schema kept in memory.
      GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
    ],
    providers: [QuotesResolver, FilteredResolver],
  })
    .setLogger(new CapturingLogger())
    .compile();
  const app = moduleRef.createNestApplication({ logger: new CapturingLogger() });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/graphql`;
  /** The HTTP status and the parsed body of a query. */
  const query = async (source: string) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: source }),
    });
    return { status: response.status, body: (await response.json()) as GraphQLBody };
  };
  return { query, url, registry: app.get(CircuitBreakerRegistry) };
}

interface GraphQLBody {
  data?: Record<string, unknown>;
  errors?: { message: string; path?: string[]; extensions: Record<string, unknown> }[];
}

describe('breaker errors in a GraphQL server (@nestjs/graphql + Apollo), over HTTP', () => {
  it('fails the field with CIRCUIT_OPEN and retryAfterMs while the other fields resolve, with HTTP 200', async () => {
    const { query, registry } = await server(true);
    registry.get('quotes').acquire().fail(new Error('quotes down'));
    const { status, body } = await query('{ hello quote { price } }');
    expect(status).toBe(200);
    expect(body.data).toEqual({ hello: 'world', quote: null });
    expect(body.errors).toHaveLength(1);
    const [error] = body.errors!;
    expect(error!.message).toBe('A dependency is unavailable; retry later.');
    expect(error!.path).toEqual(['quote']);
    expect(error!.extensions).toMatchObject({ code: 'CIRCUIT_OPEN' });
    expect(error!.extensions.retryAfterMs).toBeGreaterThan(25_000);
    expect(error!.extensions.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it("fails a resolver past the breaker's deadline with CALL_TIMEOUT", async () => {
    const { query } = await server(true);
    const { body } = await query('{ hello slowQuote { price } }');
    expect(body.data).toEqual({ hello: 'world', slowQuote: null });
    expect(body.errors![0]).toMatchObject({
      message: 'A dependency did not answer in time; retry later.',
      path: ['slowQuote'],
      extensions: { code: 'CALL_TIMEOUT' },
    });
  });

  it("answers alike through the subpath's filter, without httpFilter", async () => {
    const { query, registry } = await server(false);
    registry.get('quotes').isolate();
    const { body } = await query('{ filteredQuote { price } }');
    expect(body.data).toEqual({ filteredQuote: null });
    expect(body.errors![0]).toMatchObject({
      path: ['filteredQuote'],
      extensions: { code: 'CIRCUIT_OPEN' },
    });
    expect(body.errors![0]!.extensions).not.toHaveProperty('retryAfterMs');
  });
});

describe('classifyGraphQLResult on the responses of a real GraphQL server (all HTTP 200)', () => {
  it("counts a server fault as a failure, the caller's mistake as a success, a remote breaker as overload", async () => {
    const { query, url, registry } = await server(true);
    const client = new Breaker('graphql-client', {
      consecutiveFailures: 1,
      openDurationMs: 30_000,
      timeoutMs: false,
      classifyResult: classifyGraphQLResult,
    });
    const ask = (source: string) =>
      client.execute(() =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: source }),
        }).then((response) => response.json()),
      );
    await ask('{ hello }');
    await ask('{ hello invalid }');
    expect(client.snapshot()).toMatchObject({ state: 'closed', totals: { successes: 2 } });

    registry.get('quotes').acquire().fail(new Error('quotes down'));
    expect((await query('{ quote { price } }')).status).toBe(200);
    await ask('{ quote { price } }');
    // Overload: the client backs off (client-side throttling) without opening.
    expect(client.snapshot()).toMatchObject({
      state: 'closed',
      totals: { overloads: 1, failures: { total: 0 } },
    });

    client.reset();
    await ask('{ hello crash }');
    expect(client.state).toBe('open');
  });
});
