package io.roster.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.Instance;
import io.roster.proto.v1.InstanceIdentity;
import io.roster.proto.v1.ServiceDelta;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Applying delta pushes to the cache: exactly at the base, verified by the server's checksum. */
class DeltaApplierTest {

  private static final ServiceKey KEY = Fixtures.DEMO;

  private static Instance inst(String ip, int port, double weight, Map<String, String> metadata) {
    return Instance.builder().ip(ip).port(port).weight(weight).metadata(metadata).build();
  }

  /** The server's checksum of these instances (the server's own code, not ours). */
  private static String serverChecksum(List<Instance> instances, boolean protect) {
    List<io.roster.server.model.Instance> server = new ArrayList<>();
    for (Instance i : instances) {
      server.add(new io.roster.server.model.Instance(i.ip(), i.port(), i.weight(), i.healthy(), i.enabled(),
          i.ephemeral(), i.cluster(), i.metadata(), i.instanceId()));
    }
    io.roster.server.model.ServiceSnapshot s = io.roster.server.model.ServiceSnapshot.of(
        io.roster.server.model.ServiceKey.of(KEY.namespace(), KEY.group(), KEY.name()), server, 1, protect ? 1 : 0);
    return s.checksum();
  }

  private final List<Instance> base = List.of(
      inst("10.0.0.1", 80, 1, Map.of()),
      inst("10.0.0.2", 80, 1, Map.of("zone", "eu-1a", "ver", "é€")),
      inst("10.0.0.3", 80, 0.25, Map.of()));

  @Test
  void theClientsChecksumIsTheServers() {
    assertThat(Checksums.of(KEY, base, false)).isEqualTo(serverChecksum(base, false));
    List<Instance> unhealthy = List.of(base.get(0).toBuilder().healthy(false).build(), base.get(2));
    assertThat(Checksums.of(KEY, unhealthy, true)).isEqualTo(serverChecksum(unhealthy, true));
  }

  @Test
  void aDeltaAtTheBaseGivesTheNewStateVerified() {
    ServiceSnapshot cached = new ServiceSnapshot(KEY, base, 10, serverChecksum(base, false));
    List<Instance> target = List.of(base.get(0), inst("10.0.0.2", 80, 5, Map.of("zone", "eu-1a", "ver", "é€")),
        inst("10.0.0.25", 81, 1, Map.of()));
    ServiceDelta delta = ServiceDelta.newBuilder().setService(ProtoMapper.toProto(KEY))
        .setBaseRevision(10).setRevision(12).setChecksum(serverChecksum(target, false))
        .addUpserted(ProtoMapper.toProto(target.get(1))).addUpserted(ProtoMapper.toProto(target.get(2)))
        .addRemoved(InstanceIdentity.newBuilder().setIp("10.0.0.3").setPort(80).setCluster("DEFAULT"))
        .build();
    DeltaApplier.Outcome outcome = DeltaApplier.apply(cached, 10L, ProtoMapper.fromProto(delta));
    assertThat(outcome).isInstanceOf(DeltaApplier.Applied.class);
    ServiceSnapshot applied = ((DeltaApplier.Applied) outcome).snapshot();
    assertThat(applied.instances()).isEqualTo(target);
    assertThat(applied.revision()).isEqualTo(12);
    assertThat(applied.checksum()).isEqualTo(delta.getChecksum());
  }

  @Test
  void anotherBaseAWrongResultOrNothingCachedAskForTheFullState() {
    ServiceSnapshot cached = new ServiceSnapshot(KEY, base, 10, serverChecksum(base, false));
    ServiceDelta.Builder delta = ServiceDelta.newBuilder().setService(ProtoMapper.toProto(KEY))
        .setBaseRevision(9).setRevision(12).setChecksum(serverChecksum(base.subList(0, 2), false))
        .addRemoved(InstanceIdentity.newBuilder().setIp("10.0.0.3").setPort(80).setCluster("DEFAULT"));
    assertThat(DeltaApplier.apply(cached, 10L, ProtoMapper.fromProto(delta.build()))).isInstanceOf(DeltaApplier.Resync.class);
    assertThat(DeltaApplier.apply(null, 10L, ProtoMapper.fromProto(delta.setBaseRevision(10).build())))
        .as("cache shows a kept list").isInstanceOf(DeltaApplier.Resync.class);
    assertThat(DeltaApplier.apply(null, null, ProtoMapper.fromProto(delta.build()))).isInstanceOf(DeltaApplier.Resync.class);
    assertThat(DeltaApplier.apply(cached, 10L, ProtoMapper.fromProto(delta.build()))).isInstanceOf(DeltaApplier.Applied.class);
    assertThat(DeltaApplier.apply(cached, 10L, ProtoMapper.fromProto(delta.setChecksum("0".repeat(32)).build())))
        .as("checksum differs").isInstanceOf(DeltaApplier.Resync.class);
    assertThat(DeltaApplier.apply(cached, 12L, ProtoMapper.fromProto(delta.build()))).as("already there").isInstanceOf(DeltaApplier.Stale.class);
  }
}
