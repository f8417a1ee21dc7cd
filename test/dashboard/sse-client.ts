import { request, type IncomingMessage } from 'node:http';

/** One Server-Sent Event as a client reads it. */
export interface SseEvent {
  type: string;
  data: string;
  id?: string;
  retry?: number;
}

/** A stream read over a real connection, its events parsed as they arrive. */
export interface SseClient {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly events: SseEvent[];
  /** Resolves once the server ended the stream (or the connection closed). */
  readonly ended: Promise<void>;
  /** Resolves with the first event (from `from` on) that `match` accepts; rejects after `timeoutMs`. */
  next(match: (event: SseEvent) => boolean, from?: number, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
}

/** Opens `url` as an EventSource would (no keep-alive agent, so the test owns the socket). */
export function openStream(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      agent: false,
      headers: { accept: 'text/event-stream', ...headers },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const events: SseEvent[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: SseEvent = { type: 'message', data: '' };
          const data: string[] = [];
          for (const line of block.split('\n')) {
            const colon = line.indexOf(':');
            if (colon === 0) continue;
            const field = colon === -1 ? line : line.slice(0, colon);
            const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') event.type = value;
            else if (field === 'data') data.push(value);
            else if (field === 'id') event.id = value;
            else if (field === 'retry') event.retry = Number(value);
          }
          if (data.length === 0 && event.type === 'message') continue;
          event.data = data.join('\n');
          events.push(event);
          for (const wake of waiters) wake();
        }
      });
      const ended = new Promise<void>((done) => {
        // The socket's close, not the response's end: only then has the client let go of the connection.
        const socket = res.socket;
        if (socket === null || socket.destroyed) return done();
        socket.on('close', () => done());
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        ended,
        next(match, from = 0, timeoutMs = 5_000) {
          return new Promise((found, fail) => {
            const look = () => {
              const event = events.slice(from).find(match);
              if (event === undefined) return false;
              clearTimeout(timer);
              waiters.delete(wake);
              found(event);
              return true;
            };
            const wake = () => void look();
            const timer = setTimeout(() => {
              waiters.delete(wake);
              fail(
                new Error(
                  `no matching event within ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.type))}`,
                ),
              );
            }, timeoutMs);
            if (!look()) waiters.add(wake);
          });
        },
        close() {
          req.destroy();
        },
      });
    });
    req.end();
  });
}
