package io.roster.client.internal;

import io.roster.client.RosterClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * How {@link RosterClient.Builder#build()} creates a client: the one public class of this
 * package, because the builder lives in another. Not part of the API; everything it creates is
 * package-private here.
 */
public final class ClientFactory {

  private ClientFactory() {}

  /**
   * Validates the settings (each as {@link RosterClient.Builder} documents it; an invalid one
   * throws {@link io.roster.client.RosterException} INVALID_ARGUMENT naming it), builds a client
   * with real threads and gRPC, starts connecting and waits briefly (at most one second, or the
   * request timeout when shorter) for the first connection.
   *
   * @return the started client
   */
  public static RosterClient create(
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
      @Nullable Path tlsTrust,
      @Nullable Path tlsCertificate,
      @Nullable Path tlsKey,
      Supplier<String> token) {
    TlsSettings tls = tlsTrust == null ? null : TlsSettings.load(tlsTrust, tlsCertificate, tlsKey);
    return DefaultRosterClient.create(new ClientOptions(serverAddresses, namespace, clientId, clientName, labels,
        requestTimeout, connectTimeout, pollInterval, pollMaxBackoff, pollEnabled, reconnectInitial, reconnectMax,
        keepAliveTime, keepAliveTimeout, drainTimeout, reconnectEmptyHold, pushEmptyProtection, failoverDir,
        scheduler, listenerExecutor, tls, token));
  }
}
