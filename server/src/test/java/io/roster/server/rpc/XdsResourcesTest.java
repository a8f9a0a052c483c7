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
 * The assignment's shape (docs/xds.md, decision 100): one locality per Roster cluster and weight,
 * weighted by the weight × 100 times its instances, its zone the Roster cluster and its sub-zone
 * the weight; weight 0, unhealthy and disabled instances left out; a sum past uint32 scaled down.
 */
class XdsResourcesTest {

  private static final ServiceKey ORDERS = ServiceKey.of("public", "DEFAULT_GROUP", "orders");

  private static Instance instance(String ip, int port, double weight, String cluster) {
    return new Instance(ip, port, weight, true, true, true, cluster, Map.of(), "");
  }

  @Test
  void aLocalityPerClusterAndWeightWeightedByItsInstances() {
    ServiceSnapshot state = ServiceSnapshot.of(ORDERS, List.of(instance("10.0.0.1", 80, 1, "eu"),
        instance("10.0.0.2", 80, 3, "eu"), instance("10.0.0.3", 81, 0.5, "us"), instance("10.0.0.4", 80, 0, "eu"),
        new Instance("10.0.0.5", 80, 1, false, true, true, "eu", Map.of(), ""),
        new Instance("10.0.0.6", 80, 1, true, false, true, "eu", Map.of(), ""),
        instance("10.0.0.7", 80, 1, "eu"), instance("10.0.0.8", 80, 0.004, "eu")), 7);

    ClusterLoadAssignment a = XdsResources.assignment("orders", state);

    assertThat(a.getClusterName()).isEqualTo("orders");
    assertThat(a.getEndpointsList()).extracting(l -> l.getLocality().getZone() + "/" + l.getLocality().getSubZone()
        + " " + l.getLoadBalancingWeight().getValue() + " " + l.getPriority() + " " + endpoints(l))
        .containsExactlyInAnyOrder("eu/weight-1 1 0 [10.0.0.8:80@1]",
            "eu/weight-100 200 0 [10.0.0.1:80@100, 10.0.0.7:80@100]", "eu/weight-300 300 0 [10.0.0.2:80@300]",
            "us/weight-50 50 0 [10.0.0.3:81@50]");
  }

  private static List<String> endpoints(LocalityLbEndpoints l) {
    return l.getLbEndpointsList().stream().map(e -> e.getEndpoint().getAddress().getSocketAddress().getAddress() + ":"
        + e.getEndpoint().getAddress().getSocketAddress().getPortValue() + "@" + e.getLoadBalancingWeight().getValue())
        .sorted().toList();
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
      many.add(instance("10.1." + (i / 250) + "." + (i % 250 + 1), 80, i == 0 ? 0.01 : 10_000, "c" + (i % 2)));
    }
    ClusterLoadAssignment a = XdsResources.assignment("orders", ServiceSnapshot.of(ORDERS, many, 1));

    // c0: the one of weight 0.01 and 2,499 of 10,000; c1: 2,500 of 10,000. Unscaled: 4,999,000,001.
    assertThat(a.getEndpointsList()).extracting(l -> l.getLocality().getZone() + "/" + l.getLocality().getSubZone()
        + " " + l.getLbEndpointsCount()).containsExactlyInAnyOrder("c0/weight-1 1", "c0/weight-1000000 2499",
            "c1/weight-1000000 2500");
    long sum = 0;
    for (LocalityLbEndpoints l : a.getEndpointsList()) {
      long w = l.getLoadBalancingWeight().getValue() & 0xFFFF_FFFFL;
      sum += w;
      double expected = (double) l.getLbEndpointsCount() * Long.parseLong(l.getLocality().getSubZone().substring(7))
          * (XdsResources.MAX_WEIGHT_SUM - 3) / 4_999_000_001L;
      assertThat((double) w).as(l.getLocality().getSubZone()).isCloseTo(Math.max(1, expected),
          org.assertj.core.data.Offset.offset(1.0));
    }
    assertThat(sum).isLessThanOrEqualTo(XdsResources.MAX_WEIGHT_SUM).isGreaterThan(XdsResources.MAX_WEIGHT_SUM - 10);
  }
}
