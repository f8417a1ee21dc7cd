import { HttpService } from '@nestjs/axios';
import { HttpException, Inject, Injectable } from '@nestjs/common';
import { isAxiosError } from 'axios';
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
    @Inject(UPSTREAMS) private readonly upstreams: Upstreams,
  ) {}

  /**
   * No breaker code here: `provideAxiosCircuitBreaker(HttpService, 'pricing')`
   * (app.module.ts) puts every request of the HttpService through the pricing
   * breaker. A refused request is never sent and errors with
   * `CallRejectedError`; the breaker's deadline aborts the request.
   */
  price(id: string): Observable<Price> {
    return this.http.get<Price>(`${this.upstreams.primary}/prices/${encodeURIComponent(id)}`).pipe(
      map((response) => response.data),
      // The breaker has classified the axios error already; the client gets the upstream's status.
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
