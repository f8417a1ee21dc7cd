import { Controller, Get, Header } from '@nestjs/common';
import { register } from 'prom-client';

/**
 * Prometheus scrapes this. The circuit breaker metrics live on prom-client's
 * global registry, as `@willsoto/nestjs-prometheus` would serve them.
 */
@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('content-type', register.contentType)
  metrics(): Promise<string> {
    return register.metrics();
  }
}
