/** What the dashboard closes of a stream's connection: its socket, once its response has ended. @internal */
export interface StreamConnection {
  readonly socket: StreamSocket;
  readonly response: StreamResponse;
}

/** @internal */
export interface StreamSocket {
  readonly destroyed: boolean;
  end(): void;
  destroy(): void;
  once(event: 'close', listener: () => void): unknown;
}

/** @internal */
export interface StreamResponse {
  readonly writableFinished: boolean;
  once(event: 'finish', listener: () => void): unknown;
}

/**
 * The connections of the open streams, closed on shutdown. Ending a stream
 * is not enough: its connection stays open for keep-alive (Express's 5 s),
 * and a page that stopped reading never receives the end, so the HTTP server's
 * `close()` would wait for the client. Each connection is ended once its last
 * event is written, and destroyed if it is still open after the grace period.
 *
 * @internal
 */
export class DashboardStreamConnections {
  private readonly open = new Set<StreamConnection>();

  /** Tracks a stream's connection; the function returned forgets it (the stream ended). */
  add(connection: StreamConnection): () => void {
    this.open.add(connection);
    return () => this.open.delete(connection);
  }

  /**
   * Ends every connection once its response has finished, destroys those
   * still open after `graceMs`; resolves once every one is closed.
   */
  close(graceMs: number): Promise<void> {
    const pending = [...this.open].filter(({ socket }) => !socket.destroyed);
    this.open.clear();
    if (pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      let left = pending.length;
      const timer = setTimeout(() => {
        for (const { socket } of pending) socket.destroy();
      }, graceMs);
      for (const { socket, response } of pending) {
        socket.once('close', () => {
          if (--left > 0) return;
          clearTimeout(timer);
          resolve();
        });
        if (response.writableFinished) socket.end();
        else response.once('finish', () => socket.end());
      }
    });
  }
}
