import { HttpService } from '@nestjs/axios';
import { HttpException, Inject, Injectable } from '@nestjs/common';
import { isAxiosError } from 'axios';
import { type Breaker, circuitBreaker, InjectCircuitBreaker } from 'nestjs-circuit-breaker';
import { catchError, map, throwError, type Observable } from 'rxjs';
import { UPSTREAMS, type Upstreams } from '../sample.config.js';

export interface Price {
  id: string;
  price: number;
  currency: string;
}

@Injectable()
export class PricingService {
  constructor(
    private readonly http: HttpService,
    @InjectCircuitBreaker('pricing') private readonly breaker: Breaker,
    @Inject(UPSTREAMS) private readonly upstreams: Upstreams,
  ) {}

  /**
   * `HttpService.get()` is cold: every subscription is one request, and so one
   * call through the breaker. On the deadline the operator unsubscribes, which
   * aborts the request.
   */
  price(id: string): Observable<Price> {
    return this.http.get<Price>(`${this.upstreams.primary}/prices/${encodeURIComponent(id)}`).pipe(
      map((response) => response.data),
      circuitBreaker(this.breaker),
      // After the breaker: it has classified the axios error; the client gets the upstream's status.
      catchError((error: unknown) =>
        throwError(() =>
          isAxiosError(error) && error.response
            ? new HttpException(
                { message: `pricing answered ${error.response.status}`, upstream: 'pricing' },
                error.response.status,
              )
            : error,
        ),
      ),
    );
  }
}
