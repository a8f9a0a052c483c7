package io.roster.client.internal;

import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ServerFrame;
import org.jspecify.annotations.Nullable;

/**
 * One open {@code Session/Connect} call, as the connection manager sees it. Implementations
 * need not be thread-safe for {@link #send}: {@link Session} serialises every write.
 */
interface SessionStream {

  /** Sends a frame; fails silently when the call is already over (its end is reported). */
  void send(ClientFrame frame);

  /** Half-closes: the goodbye. The server cleans up and then completes the call. */
  void halfClose();

  /** Cancels the call at once. */
  void cancel(String reason);

  /** Receives what the server sends. Calls for one stream never overlap and come in order. */
  interface Listener {

    /** A frame arrived. */
    void onFrame(ServerFrame frame);

    /** The call ended: {@code error} is null when the server completed it normally. */
    void onClose(@Nullable Throwable error);
  }
}
