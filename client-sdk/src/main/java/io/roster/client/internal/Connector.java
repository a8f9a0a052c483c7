package io.roster.client.internal;

import io.roster.proto.v1.ListServicesRequest;
import io.roster.proto.v1.ListServicesResponse;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.QueryInstancesResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Opens calls to servers: the transport seam. {@link GrpcConnector} is the real one; tests use
 * a fake that records frames. Thread-safe.
 */
interface Connector {

  /** Opens a session call to a server; nothing is sent yet. */
  SessionStream openSession(ServerAddress address, SessionStream.Listener listener);

  /** {@code Registry/QueryInstances} with a deadline. */
  CompletableFuture<QueryInstancesResponse> queryInstances(
      ServerAddress address, QueryInstancesRequest request, Duration timeout);

  /** {@code Registry/ListServices} with a deadline. */
  CompletableFuture<ListServicesResponse> listServices(
      ServerAddress address, ListServicesRequest request, Duration timeout);

  /** Releases every connection, waiting at most {@code timeout}. Idempotent. */
  void shutdown(Duration timeout);
}
