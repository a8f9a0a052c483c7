package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.xds.shaded.io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.roster.server.model.Instance;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The assignment's shape (docs/xds.md, decision 100): one locality per instance, weighted by the
 * instance's weight × 100, its zone the Roster cluster and its sub-zone the instance's address;
 * weight 0, unhealthy and disabled instances left out; a sum past uint32 scaled down.
 */
class XdsResourcesTest {

  private static final ServiceKey ORDERS = ServiceKey.of("public", "DEFAULT_GROUP", "orders");

  private static Instance instance(String ip, int port, double weight, String cluster) {
    return new Instance(ip, port, weight, true, true, true, cluster, Map.of(), "");
  }

  @Test
  void eachInstanceIsALocalityWeightedByItsWeight() {
    ServiceSnapshot state = ServiceSnapshot.of(ORDERS, List.of(instance("10.0.0.1", 80, 1, "eu"),
        instance("10.0.0.2", 80, 3, "eu"), instance("10.0.0.3", 81, 0.5, "us"), instance("10.0.0.4", 80, 0, "eu"),
        new Instance("10.0.0.5", 80, 1, false, true, true, "eu", Map.of(), ""),
        new Instance("10.0.0.6", 80, 1, true, false, true, "eu", Map.of(), ""),
        instance("10.0.0.7", 80, 0.004, "eu"), instance("10.0.0.8", 80, 0.005, "eu")), 7);

    ClusterLoadAssignment a = XdsResources.assignment("orders", state);

    assertThat(a.getClusterName()).isEqualTo("orders");
    assertThat(a.getEndpointsList()).extracting(l -> l.getLocality().getZone() + "/" + l.getLocality().getSubZone()
        + " " + l.getLoadBalancingWeight().getValue() + " " + l.getPriority())
        .containsExactlyInAnyOrder("eu/10.0.0.1:80 100 0", "eu/10.0.0.2:80 300 0", "us/10.0.0.3:81 50 0",
            "eu/10.0.0.7:80 1 0", "eu/10.0.0.8:80 1 0");
    for (LocalityLbEndpoints l : a.getEndpointsList()) {
      assertThat(l.getLbEndpointsCount()).isEqualTo(1);
      assertThat(l.getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress().getAddress() + ":"
          + l.getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress().getPortValue())
          .isEqualTo(l.getLocality().getSubZone());
      assertThat(l.getLbEndpoints(0).getLoadBalancingWeight()).isEqualTo(l.getLoadBalancingWeight());
    }
  }

  @Test
  void weightsAreHundredthsRoundedAndAtLeastOne() {
    assertThat(XdsResources.weight(0)).isZero();
    assertThat(XdsResources.weight(0.001)).isEqualTo(1);
    assertThat(XdsResources.weight(0.016)).isEqualTo(2);
    assertThat(XdsResources.weight(1)).isEqualTo(100);
    assertThat(XdsResources.weight(2.346)).isEqualTo(235);
    assertThat(XdsResources.weight(10_000)).isEqualTo(1_000_000);
  }

  @Test
  void aSumPastUint32IsScaledDownKeepingTheRatios() {
    List<Instance> many = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      many.add(instance("10.1." + (i / 250) + "." + (i % 250 + 1), 80, i == 0 ? 0.01 : 10_000, "eu"));
    }
    ClusterLoadAssignment a = XdsResources.assignment("orders", ServiceSnapshot.of(ORDERS, many, 1));

    assertThat(a.getEndpointsCount()).isEqualTo(5000);
    long sum = a.getEndpointsList().stream().mapToLong(l -> l.getLoadBalancingWeight().getValue() & 0xFFFF_FFFFL).sum();
    assertThat(sum).isLessThanOrEqualTo(XdsResources.MAX_WEIGHT_SUM).isGreaterThan(XdsResources.MAX_WEIGHT_SUM - 10_000);
    assertThat(a.getEndpointsList()).extracting(l -> l.getLoadBalancingWeight().getValue())
        .contains(1).filteredOn(w -> w > 1).hasSize(4999).allSatisfy(w -> assertThat(w).isBetween(859_000, 859_300));
  }
}
