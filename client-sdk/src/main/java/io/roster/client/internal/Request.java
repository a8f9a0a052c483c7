package io.roster.client.internal;

import io.roster.client.Instance;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * What the client sends on a session, in its own terms: {@link ProtoMapper#frame} turns each
 * into its frame, so that only the mapper and the transport know the wire messages. Immutable.
 */
sealed interface Request {

  /** Adds or replaces one instance. */
  record Register(ServiceKey key, Instance instance) implements Request {}

  /** Removes one instance, by identity (ip, port, cluster). */
  record Deregister(ServiceKey key, Instance instance) implements Request {}

  /** The whole desired set of a service: replaces what the session registered there. */
  record BatchRegister(ServiceKey key, Collection<Instance> instances) implements Request {
    public BatchRegister {
      instances = List.copyOf(instances);
    }
  }

  /** Subscribes to a service. */
  record Subscribe(ServiceKey key) implements Request {}

  /** Unsubscribes from a service. */
  record Unsubscribe(ServiceKey key) implements Request {}

  /** Asks for the state of a service (a server that lists the {@code query} feature). */
  record Query(ServiceKey key) implements Request {}

  /** Deregisters everything and waits up to {@code timeoutMs} for subscribers' acks (0: the server's default). */
  record Drain(long timeoutMs) implements Request {}

  /** Keeps a silent session alive and asks the server for any frame. */
  record Ping() implements Request {}

  /** Acknowledges a push; {@code resync} asks the server for the full state at once. */
  record PushAck(String pushId, boolean resync) implements Request {}

  /**
   * The first frame of a session.
   *
   * @param sessionSeq grows with every session of this client (its server lets a newer one win)
   * @param token the credential, empty for none
   */
  record Hello(String clientId, String namespace, String clientName, String clientVersion,
      Map<String, String> labels, List<String> features, long sessionSeq, String token) implements Request {

    public Hello {
      labels = Map.copyOf(labels);
      features = List.copyOf(features);
    }

    Hello withSessionSeq(long seq) {
      return new Hello(clientId, namespace, clientName, clientVersion, labels, features, seq, token);
    }

    /** Without the token, which never goes to a log. */
    @Override
    public String toString() {
      return "Hello[clientId=" + clientId + ", namespace=" + namespace + ", sessionSeq=" + sessionSeq
          + ", token=" + (token.isEmpty() ? "none" : "(set)") + "]";
    }
  }

  /** A newer token for the open session: the same identity, renewed (a server listing {@code credentials}). */
  record Credentials(String token) implements Request {
    /** Without the token, which never goes to a log. */
    @Override
    public String toString() {
      return "Credentials[token=(set)]";
    }
  }
}
