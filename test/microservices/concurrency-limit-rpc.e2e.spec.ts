import type { AddressInfo, Server } from 'node:net';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { ClientProxyFactory, MessagePattern, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { CircuitBreakerModule, CircuitBreakerRegistry, ConcurrencyLimit } from '../../lib/index.js';
import { deferred } from '../helpers/deferred.js';
import { CapturingLogger } from '../helpers/nest-app.js';

const held = deferred<number>();
const started = deferred<void>();
let handled = 0;

@Controller()
class LedgerController {
  @MessagePattern('post')
  @ConcurrencyLimit('ledger')
  async post(entry: string) {
    handled++;
    started.resolve();
    return { entry, balance: await held.promise };
  }
}

const opened: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  while (opened.length > 0) await opened.pop()!.close();
});

describe('ConcurrencyLimitInterceptor over a TCP microservice', () => {
  it('answers a shed request with the LOAD_SHED payload, and frees the place when the handler ends', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        CircuitBreakerModule.forRoot({
          httpFilter: true,
          limiters: { ledger: { algorithm: 'fixed', initialLimit: 1, maxQueue: 0 } },
        }),
      ],
      controllers: [LedgerController],
    })
      .setLogger(new CapturingLogger())
      .compile();
    const app: INestMicroservice = moduleRef.createNestMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port: 0 },
      logger: new CapturingLogger(),
    });
    await app.listen();
    opened.push(app);
    const port = (app.unwrap<Server>().address() as AddressInfo).port;
    const client = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
    });
    opened.push(client);

    const first = firstValueFrom(client.send('post', 'a'));
    await started.promise;
    const shed = await firstValueFrom(client.send('post', 'b')).catch((error: unknown) => error);
    expect(shed).toEqual({
      status: 'error',
      code: 'LOAD_SHED',
      message: 'The service is overloaded; retry later.',
    });
    expect(handled).toBe(1);
    held.resolve(10);
    expect(await first).toEqual({ entry: 'a', balance: 10 });
    expect(await firstValueFrom(client.send('post', 'c'))).toEqual({ entry: 'c', balance: 10 });
    expect(app.get(CircuitBreakerRegistry).limiter('ledger').snapshot()).toMatchObject({
      inFlight: 0,
      admitted: 2,
      shed: 1,
    });
  });
});
