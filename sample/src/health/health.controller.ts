import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { CircuitBreakerHealthIndicator } from 'nestjs-circuit-breaker/terminus';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly breakers: CircuitBreakerHealthIndicator,
  ) {}

  /** Liveness never looks at breakers: restarting this process does not repair a dependency. */
  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /** For a public endpoint: the same verdict without breaker names or failure rates. */
  @Get('public')
  @HealthCheck()
  public() {
    return this.health.check([
      () => this.breakers.isHealthy('circuit_breakers', { details: false }),
    ]);
  }

  /** Readiness: an open breaker takes this replica out of rotation until its dependency recovers. */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.breakers.isHealthy('circuit_breakers')]);
  }
}
