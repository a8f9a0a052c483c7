package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.proto.v1.ServiceInfo;
import io.roster.server.model.Instance;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.model.WireSize;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The registry's plain-Java byte accounting equals what the generated code writes. */
class WireSizeTest {

  private final ServiceKey key = ServiceKey.of("", "", "sized");

  @Test
  void instanceSizesMatchTheGeneratedEncoding() {
    List<Instance> instances = List.of(
        new Instance("10.0.0.1", 80, 1, true, true, true, "", Map.of(), "").withId(key),
        new Instance("10.0.0.2", 65535, 0, false, false, true, "eu-west", Map.of("zone", "é€😀", "k", ""), "").withId(key),
        new Instance("host.example", 8080, 2.5, true, true, true, "", Map.of("blob", "x".repeat(1000), "more", "y".repeat(1000)), "").withId(key));
    int total = 0;
    for (Instance i : instances) {
      assertThat(WireSize.ofInstance(i)).as(i.ip()).isEqualTo(ProtoMapper.toProto(i).getSerializedSize());
      total += WireSize.ofInstanceInList(i);
    }
    ServiceInfo empty = ProtoMapper.toProto(ServiceSnapshot.of(key, List.of(), 1));
    ServiceInfo full = ProtoMapper.toProto(new ServiceSnapshot(key, new ArrayList<>(instances), 1,
        empty.getChecksum(), false));
    assertThat(full.getSerializedSize() - empty.getSerializedSize()).isEqualTo(total);
  }
}
