import { Controller, Get, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CircuitBreakerModule } from '../../lib/index.js';
import { CircuitBreakerTestingModule } from '../../lib/testing/index.js';
import { testRunnerOf } from '../../lib/testing/test-runner.js';

const WARNING =
  'CircuitBreakerTestingModule is in use outside a test runner (none of VITEST, JEST_WORKER_ID, NODE_TEST_CONTEXT or NODE_ENV=test is set, no global describe() and it()): every breaker runs on a ManualClock, so deadlines never fire and open breakers never recover unless the clock is moved. Import CircuitBreakerModule in an application that serves traffic; if this is a test, set NODE_ENV=test.';

/** Every warning logged, with its context. */
class WarningLogger implements LoggerService {
  readonly warnings: string[] = [];
  log(): void {}
  error(): void {}
  warn(message: unknown, context?: unknown): void {
    this.warnings.push(`${String(context)}: ${String(message)}`);
  }
}

@Controller()
class PingController {
  @Get('ping')
  ping() {
    return { ok: true };
  }
}

/** An application serving HTTP with `imported`, as a deployment would start it; closed before returning. */
async function serve(imported: unknown): Promise<{ warnings: string[]; status: number }> {
  const logger = new WarningLogger();
  const moduleRef = await Test.createTestingModule({
    imports: [imported as never],
    controllers: [PingController],
  })
    .setLogger(logger)
    .compile();
  const app = moduleRef.createNestApplication({ logger });
  try {
    await app.listen(0, '127.0.0.1');
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const status = (await fetch(`${url}/ping`)).status;
    return { warnings: logger.warnings, status };
  } finally {
    await app.close();
  }
}

/** This process as a deployment sees it: no variable a test runner sets. */
function outsideTestRunner(): void {
  for (const variable of ['VITEST', 'JEST_WORKER_ID', 'NODE_TEST_CONTEXT', 'NODE_ENV'])
    vi.stubEnv(variable, undefined);
}

describe('CircuitBreakerTestingModule outside a test runner', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('warns once at start-up of an application that serves traffic on it', async () => {
    outsideTestRunner();
    const served = await serve(CircuitBreakerTestingModule.forRoot());
    expect(served).toEqual({ status: 200, warnings: [`CircuitBreakerTestingModule: ${WARNING}`] });
  });

  it('warns through forRootAsync() too', async () => {
    outsideTestRunner();
    const served = await serve(
      CircuitBreakerTestingModule.forRootAsync({ useFactory: () => ({}) }),
    );
    expect(served.warnings).toEqual([`CircuitBreakerTestingModule: ${WARNING}`]);
  });

  it('says nothing under a test runner, nor for CircuitBreakerModule', async () => {
    expect((await serve(CircuitBreakerTestingModule.forRoot())).warnings).toEqual([]);
    outsideTestRunner();
    expect((await serve(CircuitBreakerModule.forRoot())).warnings).toEqual([]);
    vi.stubEnv('NODE_ENV', 'test');
    expect((await serve(CircuitBreakerTestingModule.forRoot())).warnings).toEqual([]);
  });

  it('knows a test runner by its variable, NODE_ENV=test, or global describe() and it()', () => {
    const fn = () => undefined;
    expect(testRunnerOf({ VITEST: 'true' }, {})).toBe('VITEST');
    expect(testRunnerOf({ JEST_WORKER_ID: '1' }, {})).toBe('JEST_WORKER_ID');
    expect(testRunnerOf({ NODE_TEST_CONTEXT: 'child-v8' }, {})).toBe('NODE_TEST_CONTEXT');
    expect(testRunnerOf({ NODE_ENV: 'test' }, {})).toBe('NODE_ENV=test');
    expect(testRunnerOf({}, { describe: fn, it: fn })).toBe('describe() and it()');
    expect(testRunnerOf({ NODE_ENV: 'production', VITEST: '' }, { describe: fn })).toBeUndefined();
  });
});
