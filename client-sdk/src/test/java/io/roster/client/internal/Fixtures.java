package io.roster.client.internal;

import io.roster.client.Instance;
import io.roster.proto.v1.ServiceInfo;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executor;

/** Small builders shared by the unit tests. */
final class Fixtures {

  static final ServiceKey DEMO = new ServiceKey("public", "DEFAULT_GROUP", "demo");

  private Fixtures() {}

  /**
   * Options for a unit test: the SDK's default reconnect back-off (100 ms .. 3 s) and keepalive
   * (5 s / 5 s); no drain on close, no empty hold.
   */
  static ClientOptions options(String servers, Duration requestTimeout, boolean poll,
      Executor listenerExecutor) {
    return options(servers, requestTimeout, poll, listenerExecutor, Duration.ZERO);
  }

  static ClientOptions options(String servers, Duration requestTimeout, boolean poll,
      Executor listenerExecutor, Duration reconnectEmptyHold) {
    return new ClientOptions(servers, "public", "test-client", "roster-java-test", Map.of(),
        requestTimeout, requestTimeout, Duration.ofSeconds(10), Duration.ofSeconds(60), poll,
        Duration.ofMillis(100), Duration.ofSeconds(3), Duration.ofSeconds(5),
        Duration.ofSeconds(5), Duration.ZERO, reconnectEmptyHold, false, null, null, listenerExecutor, null, () -> "");
  }

  static io.roster.proto.v1.Instance proto(String ip, int port) {
    return ProtoMapper.toProto(Instance.of(ip, port));
  }

  static ServiceInfo info(ServiceKey key, long revision, String checksum,
      io.roster.proto.v1.Instance... instances) {
    ServiceInfo.Builder b = ServiceInfo.newBuilder()
        .setService(ProtoMapper.toProto(key))
        .setRevision(revision)
        .setChecksum(checksum);
    for (io.roster.proto.v1.Instance i : instances) {
      b.addInstances(i);
    }
    return b.build();
  }

  static ServiceSnapshot snapshot(long revision, Instance... instances) {
    return new ServiceSnapshot(DEMO, java.util.List.of(instances), revision, "c" + revision);
  }
}
