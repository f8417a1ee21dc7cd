/** An HTTP-shaped error as axios throws it. */
export function httpError(status: number, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(`HTTP ${status}`), { response: { status, headers } });
}
