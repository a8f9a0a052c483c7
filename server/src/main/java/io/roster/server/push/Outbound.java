package io.roster.server.push;

/**
 * Where a {@link PushQueue} writes: implemented by the rpc layer over a gRPC stream.
 * Calls come from one thread at a time (the queue's lock).
 */
public interface Outbound {

  /** Whether the transport can take a message now without buffering. */
  boolean isReady();

  /** Writes one push. Never blocks; may be a no-op once the stream has ended. */
  void send(PushPayload payload);
}
