package io.roster.server.push;

/**
 * Where a {@link PushQueue} writes: implemented by the rpc layer over a gRPC stream.
 * Calls come from one thread at a time (the queue's lock).
 */
public interface Outbound {

  /** Whether the transport can take a message now without buffering. */
  boolean isReady();

  /**
   * Writes one push. Never blocks; may be a no-op once the stream has ended.
   *
   * @return the bytes of the message written (its encoding's size), 0 when nothing was written
   */
  int send(PushPayload payload);

  /**
   * Asks the client to move to {@code suggestedServer} ({@code host:port} of a client port, or
   * empty for the client's own next server), for {@code reason}, in its protocol's words (a
   * Roster {@code reconnect} frame, a Nacos {@code ConnectResetRequest}). The session stays
   * until its client leaves. Never blocks; may be called from any thread.
   *
   * @return whether the client was asked; false for a transport that cannot ask (the default)
   */
  default boolean move(String reason, String suggestedServer) {
    return false;
  }

  /**
   * Ends the client's session from the server's side, telling it {@code why} in its protocol's
   * words (a Roster stream ends with the status; a Nacos connection is closed): its identity is no
   * longer valid. What it registered is removed as for any end. Never blocks; any thread.
   *
   * @return whether the transport could end it; false for one that cannot (the default)
   */
  default boolean end(io.roster.server.model.RegistryException why) {
    return false;
  }
}
