import { HttpException } from '@nestjs/common';

/**
 * Turns a non-2xx upstream answer into an HttpException with the same status,
 * keeping `Retry-After` in the body where the breaker's classification finds it.
 */
export async function ensureOk(response: Response, upstream: string): Promise<Response> {
  if (response.ok) return response;
  const body = (await response.json().catch(() => ({}))) as { message?: string };
  const retryAfter = response.headers.get('retry-after') ?? undefined;
  throw new HttpException({ message: body.message ?? `${upstream} answered ${response.status}`, upstream, retryAfter }, response.status);
}
