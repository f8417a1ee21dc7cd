/**
 * What the dashboard closes of a stream's connection: its socket once its
 * response has ended (HTTP/1.1), or its HTTP/2 session. @internal
 */
export interface StreamConnection {
  readonly socket: StreamSocket;
  readonly response: StreamResponse;
  /** Over HTTP/2: the session the stream is one of, which holds the connection. */
  readonly session?: StreamSession;
}

/** What is destroyed after the grace period, and waited for: a socket or an HTTP/2 session. @internal */
export interface Closable {
  readonly destroyed: boolean;
  destroy(): void;
  once(event: 'close', listener: () => void): unknown;
}

/** @internal */
export interface StreamSocket extends Closable {
  end(): void;
}

/** @internal */
export interface StreamSession extends Closable {
  /** Sends GOAWAY: no new stream, and the session closes once its streams have ended. */
  close(): void;
  /** Node's proxy of its socket, which passes on what it does not forbid (`resetAndDestroy()`, over TCP). */
  readonly socket?: { resetAndDestroy?(): unknown };
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
 * Over HTTP/2 the connection is the stream's session: it is told to close
 * (GOAWAY) at once, which lets its streams end, and destroyed after the grace.
 *
 * @internal
 */
export class DashboardStreamConnections {
  private readonly open = new Set<StreamConnection>();

  /** `tlsSocketOf`: the TLS socket of an HTTP/2 session, which Node's session does not destroy. */
  constructor(
    private readonly tlsSocketOf: (session: StreamSession) => Closable | undefined = () =>
      undefined,
  ) {}

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
    // One entry per connection: several streams of a page may share an HTTP/2 session.
    const pending = new Map<Closable, Closing>();
    for (const connection of this.open) {
      const { socket, session } = connection;
      if (session === undefined) pending.set(socket, closingSocket(connection));
      else if (!pending.has(session))
        pending.set(session, closingSession(session, this.tlsSocketOf(session)));
    }
    this.open.clear();
    for (const closable of pending.keys()) if (closable.destroyed) pending.delete(closable);
    if (pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      let left = pending.size;
      const timer = setTimeout(() => {
        for (const { destroy } of pending.values()) destroy();
      }, graceMs);
      for (const [closable, { end }] of pending) {
        closable.once('close', () => {
          if (--left > 0) return;
          clearTimeout(timer);
          resolve();
        });
        end();
      }
    });
  }
}

/** How a connection is closed: gently at once, then for good after the grace period. */
interface Closing {
  end(): void;
  destroy(): void;
}

/** HTTP/1.1: the socket is ended once the response's end is written. */
function closingSocket({ socket, response }: StreamConnection): Closing {
  return {
    end: () => {
      if (response.writableFinished) socket.end();
      else response.once('finish', () => socket.end());
    },
    destroy: () => socket.destroy(),
  };
}

/**
 * HTTP/2: the session is told to close (GOAWAY), which lets its streams end.
 * Destroyed once told to close, Node only half-closes its socket and waits
 * for the page to close its side, which a page that does not read never
 * does: after the grace, the connection goes too. Over TCP it is reset
 * (taken now, while the session still has its socket); over TLS, where
 * Node's proxy of the socket refuses both `destroy()` and a reset, the TLS
 * socket the server gave (`tlsSocket`) is destroyed.
 */
function closingSession(session: StreamSession, tlsSocket?: Closable): Closing {
  let reset: (() => unknown) | undefined;
  try {
    reset = session.socket?.resetAndDestroy;
  } catch {
    // The session has no socket any more.
  }
  return {
    end: () => session.close(),
    destroy: () => {
      try {
        if (tlsSocket === undefined) reset?.();
      } catch {
        // Not a TCP socket (TLS, from a server the dashboard does not watch).
      }
      session.destroy();
      tlsSocket?.destroy();
    },
  };
}
