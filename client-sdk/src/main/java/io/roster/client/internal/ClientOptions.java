package io.roster.client.internal;

import io.roster.client.RosterException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The validated settings of a client, as collected by {@code RosterClient.Builder} and handed
 * to {@link ClientFactory#create}. Public only for that hand-over; not part of the API.
 *
 * @param serverAddresses comma-separated host:port list
 * @param namespace the namespace of every call
 * @param clientId stable client id sent in hello
 * @param clientName free-form client name sent in hello
 * @param labels labels sent in hello
 * @param requestTimeout how long blocking calls wait
 * @param connectTimeout how long one connection attempt waits for the welcome and the redo's answers
 * @param pollInterval poll period per subscribed service
 * @param pollMaxBackoff longest poll period while polls fail
 * @param pollEnabled whether to poll at all
 * @param reconnectInitial first reconnect back-off ceiling
 * @param reconnectMax largest reconnect back-off ceiling
 * @param keepAliveTime idle time before a ping
 * @param keepAliveTimeout how long to wait for any frame after a ping
 * @param drainTimeout how long close() waits for subscribers to confirm; zero disables the drain
 * @param reconnectEmptyHold how long, after a reconnect, a state that would empty a known
 *     service is held back; zero applies it at once
 * @param pushEmptyProtection keep the last non-empty list when a state would empty a service
 * @param failoverDir where last-known lists are written and read back while no server answers;
 *     null disables the failover snapshot
 * @param scheduler timers and background work shared with other clients, or null for a
 *     client-owned thread
 * @param listenerExecutor where listeners run, or null for a client-owned pool
 * @param tls the CAs to trust and the client's own certificate, read and checked; null for
 *     plaintext
 */
public record ClientOptions(
    String serverAddresses,
    String namespace,
    String clientId,
    String clientName,
    Map<String, String> labels,
    Duration requestTimeout,
    Duration connectTimeout,
    Duration pollInterval,
    Duration pollMaxBackoff,
    boolean pollEnabled,
    Duration reconnectInitial,
    Duration reconnectMax,
    Duration keepAliveTime,
    Duration keepAliveTimeout,
    Duration drainTimeout,
    Duration reconnectEmptyHold,
    boolean pushEmptyProtection,
    @Nullable Path failoverDir,
    @Nullable ScheduledExecutorService scheduler,
    @Nullable Executor listenerExecutor,
    @Nullable TlsSettings tls,
    Supplier<String> token) {

  /** The longest drain wait a server accepts. */
  static final Duration MAX_DRAIN_TIMEOUT = Duration.ofSeconds(60);

  /** Validates every setting; messages name the setting, the value and what was expected. */
  public ClientOptions {
    Objects.requireNonNull(serverAddresses, "serverAddresses");
    if (namespace == null || namespace.isBlank()) {
      throw invalid("namespace", "'" + namespace + "'", "a non-empty name");
    }
    if (clientId == null || clientId.isBlank() || clientId.length() > 128) {
      throw invalid("clientId", "'" + clientId + "'", "1..128 characters");
    }
    Objects.requireNonNull(clientName, "clientName");
    labels = Map.copyOf(labels);
    positive("requestTimeout", requestTimeout);
    positive("connectTimeout", connectTimeout);
    positive("pollInterval", pollInterval);
    positive("pollMaxBackoff", pollMaxBackoff);
    if (pollMaxBackoff.compareTo(pollInterval) < 0) {
      throw invalid("pollMaxBackoff", pollMaxBackoff.toString(), ">= pollInterval " + pollInterval);
    }
    positive("reconnectBackoff.initial", reconnectInitial);
    positive("reconnectBackoff.max", reconnectMax);
    if (reconnectMax.compareTo(reconnectInitial) < 0) {
      throw invalid("reconnectBackoff.max", reconnectMax.toString(),
          ">= reconnectBackoff.initial " + reconnectInitial);
    }
    positive("keepAlive.time", keepAliveTime);
    positive("keepAlive.timeout", keepAliveTimeout);
    checkDrainTimeout("drainTimeout", drainTimeout);
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(reconnectEmptyHold, "reconnectEmptyHold");
    if (reconnectEmptyHold.isNegative() || reconnectEmptyHold.compareTo(Duration.ofMinutes(1)) > 0) {
      throw invalid("reconnectEmptyHold", reconnectEmptyHold.toString(), "0 .. PT1M");
    }
  }

  /** The drain's wait: 0 .. 60 s, as the server accepts. */
  static void checkDrainTimeout(String field, Duration value) {
    Objects.requireNonNull(value, field);
    if (value.isNegative() || value.compareTo(MAX_DRAIN_TIMEOUT) > 0) {
      throw invalid(field, value.toString(), "0 .. " + MAX_DRAIN_TIMEOUT);
    }
  }

  private static void positive(String field, Duration value) {
    Objects.requireNonNull(value, field);
    if (value.isNegative() || value.isZero()) {
      throw invalid(field, value.toString(), "a positive duration");
    }
  }

  private static RosterException invalid(String field, String value, String expected) {
    return new RosterException(RosterException.Code.INVALID_ARGUMENT,
        field + ": " + value + " (expected: " + expected + ")", field, null);
  }
}
