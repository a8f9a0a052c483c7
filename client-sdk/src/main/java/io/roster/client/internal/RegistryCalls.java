package io.roster.client.internal;

import io.roster.client.RosterClient;
import io.roster.client.ServicePage;
import io.roster.proto.v1.ListServicesRequest;
import io.roster.proto.v1.ListServicesResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The {@code Registry} calls of the {@link Connector}, in the client's terms: the transport side
 * of {@link Queries} and the {@link Poller}. Stateless; thread-safe; never blocks.
 */
final class RegistryCalls {

  private final Connector connector;

  RegistryCalls(Connector connector) {
    this.connector = connector;
  }

  /** {@code Registry/QueryInstances}; {@code knownChecksum} empty when nothing is cached. */
  CompletableFuture<QueryAnswer> queryInstances(ServerAddress address, ServiceKey key, String knownChecksum,
      Duration timeout) {
    return connector.queryInstances(address, ProtoMapper.queryRequest(key, knownChecksum), timeout)
        .thenApply(ProtoMapper::fromProto);
  }

  /** {@code Registry/ListServices}: one page of the services of {@code namespace} in {@code group}. */
  CompletableFuture<ServicePage> listServices(ServerAddress address, String namespace, @Nullable String group, int pageNo,
      int pageSize, Duration timeout) {
    ListServicesRequest request = ListServicesRequest.newBuilder()
        .setNamespace(namespace)
        .setGroup(group == null || group.isEmpty() ? RosterClient.DEFAULT_GROUP : group)
        .setPageNo(pageNo)
        .setPageSize(pageSize)
        .build();
    return connector.listServices(address, request, timeout).thenApply(RegistryCalls::page);
  }

  private static ServicePage page(ListServicesResponse response) {
    List<String> names = new ArrayList<>(response.getServicesCount());
    response.getServicesList().forEach(s -> names.add(s.getName()));
    return new ServicePage(response.getTotal(), names);
  }
}
