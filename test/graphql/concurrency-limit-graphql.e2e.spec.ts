import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import type { INestApplication } from '@nestjs/common';
import { Field, GraphQLModule, Int, ObjectType, Query, Resolver } from '@nestjs/graphql';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { CircuitBreakerModule, CircuitBreakerRegistry, ConcurrencyLimit } from '../../lib/index.js';
import { deferred } from '../helpers/deferred.js';
import { CapturingLogger } from '../helpers/nest-app.js';

const held = deferred<number>();
const started = deferred<void>();

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
  @ConcurrencyLimit('quotes')
  async quote() {
    started.resolve();
    return { price: await held.promise };
  }
}

const apps: INestApplication[] = [];
afterEach(async () => {
  while (apps.length > 0) await apps.pop()!.close();
});

interface GraphQLBody {
  data?: Record<string, unknown>;
  errors?: { message: string; path?: string[]; extensions: Record<string, unknown> }[];
}

describe('ConcurrencyLimitInterceptor in a GraphQL server (@nestjs/graphql + Apollo)', () => {
  it('fails a shed field with LOAD_SHED while the others resolve, and frees the place', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        CircuitBreakerModule.forRoot({
          httpFilter: true,
          limiters: { quotes: { algorithm: 'fixed', initialLimit: 1, maxQueue: 0 } },
        }),
        GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
      ],
      providers: [QuotesResolver],
    })
      .setLogger(new CapturingLogger())
      .compile();
    const app = moduleRef.createNestApplication({ logger: new CapturingLogger() });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/graphql`;
    // Two fields of one query resolve at once: the second finds the only place taken.
    const response = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ hello first: quote { price } second: quote { price } }' }),
    });
    await started.promise;
    held.resolve(42);
    const answer = await response;
    const body = (await answer.json()) as GraphQLBody;
    expect(answer.status).toBe(200);
    expect(body.data).toEqual({ hello: 'world', first: { price: 42 }, second: null });
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: 'The service is overloaded; retry later.',
        path: ['second'],
        extensions: { code: 'LOAD_SHED' },
      }),
    ]);
    expect(app.get(CircuitBreakerRegistry).limiter('quotes').snapshot()).toMatchObject({
      inFlight: 0,
      admitted: 1,
      shed: 1,
    });
  });
});
