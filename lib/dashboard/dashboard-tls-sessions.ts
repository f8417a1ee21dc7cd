import { Server as TlsServer, type TLSSocket } from 'node:tls';

/**
 * The TLS socket of each HTTP/2 session of a server (Fastify with `http2: true`
 * and `https`), so that the dashboard can close the connection of a page
 * that stopped reading. Node gives a session's socket only as a proxy that
 * refuses `destroy()` (`ERR_HTTP2_NO_SOCKET_MANIPULATION`), its
 * `resetAndDestroy()` works on TCP sockets only (`ERR_INVALID_HANDLE_TYPE`),
 * and `session.destroy()` only ends the socket (`finishSessionClose()` in
 * Node's `lib/internal/http2/core.js`, although its docs say "immediately
 * terminates"): the end waits behind the data the page does not read, so the
 * socket, and the server's `close()`, stay open until the page leaves or TCP
 * gives up. The server's own events give the
 * socket: `secureConnection`, within which Node creates the session and emits
 * `session`. The sessions are weakly held: nothing is kept for a connection
 * once it is gone.
 *
 * @internal
 */
export class DashboardTlsSessions {
  private readonly sockets = new WeakMap<object, TLSSocket>();

  /** The TLS socket of `session`, when it is a session of a watched server. */
  socketOf(session: object): TLSSocket | undefined {
    return this.sockets.get(session);
  }

  /**
   * Pairs each session `server` opens from now on with its TLS socket, if it
   * is a TLS server. The function returned stops.
   */
  watch(server: unknown): () => void {
    if (!(server instanceof TlsServer)) return () => undefined;
    let connecting: TLSSocket | undefined;
    // Before Node's listener, which creates the session and emits `session` at once; then after it.
    const arrived = (socket: TLSSocket) => (connecting = socket);
    const paired = () => (connecting = undefined);
    const opened = (session: object) => {
      if (connecting !== undefined) this.sockets.set(session, connecting);
    };
    server.prependListener('secureConnection', arrived);
    server.on('session', opened);
    server.on('secureConnection', paired);
    return () => {
      server.off('secureConnection', arrived);
      server.off('session', opened);
      server.off('secureConnection', paired);
    };
  }
}
