import { CanceledError } from 'axios';
import type { AxiosResponse, GenericAbortSignal, InternalAxiosRequestConfig } from 'axios';

/** What a streamed body of axios' http adapter (a Node `Readable`) offers. */
interface StreamBody {
  readonly destroyed?: boolean;
  destroy(error?: unknown): void;
  once(event: 'close', listener: () => void): void;
}

/**
 * A streamed response (`responseType: 'stream'`) of axios' own adapter,
 * whose body the caller's own `signal` still aborts, as it does without the
 * breaker. The adapter listened to the request's signal only, which let go
 * of the caller's when the headers came (the breaker's deadline ends there),
 * so the caller's abort would leave the body open. The body is destroyed
 * with axios' `CanceledError`, and the listener goes when the body closes.
 *
 * @internal
 */
export function cancellableBody(
  sent: Promise<AxiosResponse>,
  signal: GenericAbortSignal,
  config: InternalAxiosRequestConfig,
): Promise<AxiosResponse> {
  return sent.then((response) => {
    const body = response.data as Partial<StreamBody> | null | undefined;
    if (typeof body?.destroy !== 'function' || typeof body.once !== 'function' || body.destroyed)
      return response;
    const stream = body as StreamBody;
    const abort = (): void =>
      stream.destroy(new CanceledError(undefined, config, response.request as unknown));
    if (signal.aborted) abort();
    else if (typeof signal.addEventListener === 'function') {
      signal.addEventListener('abort', abort);
      stream.once('close', () => signal.removeEventListener?.('abort', abort));
    }
    return response;
  });
}
