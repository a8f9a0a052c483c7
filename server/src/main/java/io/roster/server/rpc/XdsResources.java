package io.roster.server.rpc;

import com.google.protobuf.Any;
import com.google.protobuf.UInt32Value;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.core.v3.Address;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.core.v3.Locality;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.listener.v3.ApiListener;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.listener.v3.Listener;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.route.v3.Route;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.grpc.xds.shaded.io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.grpc.xds.shaded.io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.grpc.xds.shaded.io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.roster.server.model.Instance;
import io.roster.server.model.ServiceSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The xDS resources {@link XdsService} sends for a name (docs/xds.md, decisions 71 and 100): the
 * listener with its route inline, the EDS cluster, and the assignment.
 *
 * <p>The assignment has <b>one locality per Roster cluster and instance weight</b>, weighted by
 * that weight times its instances: gRPC clients share calls between localities by their weights
 * (weighted_target) but round-robin over the endpoints of one locality whatever their weights. A
 * locality's zone is the Roster cluster and its sub-zone {@code weight-<w>}; all are priority 0. Stateless: every
 * method is a pure function of its arguments, safe from any thread.
 */
final class XdsResources {

  /** The largest sum of locality weights a client takes at one priority (uint32). */
  static final long MAX_WEIGHT_SUM = 0xFFFF_FFFFL;

  private XdsResources() {}

  static Any listener(String name) {
    RouteConfiguration routes = RouteConfiguration.newBuilder().setName(name)
        .addVirtualHosts(VirtualHost.newBuilder().setName(name).addDomains("*")
            .addRoutes(Route.newBuilder().setMatch(RouteMatch.newBuilder().setPrefix(""))
                .setRoute(RouteAction.newBuilder().setCluster(name))))
        .build();
    HttpConnectionManager manager = HttpConnectionManager.newBuilder().setRouteConfig(routes)
        .addHttpFilters(HttpFilter.newBuilder().setName("envoy.filters.http.router")
            .setTypedConfig(Any.pack(Router.getDefaultInstance())))
        .build();
    return Any.pack(Listener.newBuilder().setName(name)
        .setApiListener(ApiListener.newBuilder().setApiListener(Any.pack(manager))).build());
  }

  static Any cluster(String name) {
    return Any.pack(Cluster.newBuilder().setName(name).setType(Cluster.DiscoveryType.EDS)
        .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder().setEdsConfig(ConfigSource.newBuilder()
            .setAds(AggregatedConfigSource.getDefaultInstance()).setResourceApiVersion(ApiVersion.V3)))
        .setLbPolicy(Cluster.LbPolicy.ROUND_ROBIN).build());
  }

  static Any endpoints(String name, ServiceSnapshot state) {
    return Any.pack(assignment(name, state));
  }

  /**
   * The service's healthy, enabled instances of positive weight, a locality per Roster cluster and
   * {@link #weight} (instances of one weight round-robin within it), weighted by that weight times
   * its instances, scaled down when their sum would pass {@link #MAX_WEIGHT_SUM}.
   */
  static ClusterLoadAssignment assignment(String name, ServiceSnapshot state) {
    Map<String, Map<Long, List<Instance>>> groups = new TreeMap<>();
    long sum = 0;
    int localities = 0;
    for (Instance i : state.view(Set.of(), true).instances()) {
      long w = weight(i.weight());
      if (w > 0) {
        List<Instance> group = groups.computeIfAbsent(i.cluster(), c -> new TreeMap<>())
            .computeIfAbsent(w, k -> new ArrayList<>());
        localities += group.isEmpty() ? 1 : 0;
        group.add(i);
        sum += w;
      }
    }
    // Scaled into MAX_WEIGHT_SUM less one per locality, so that rounding each up to 1 cannot pass it.
    double scale = sum > MAX_WEIGHT_SUM ? (double) (MAX_WEIGHT_SUM - localities) / sum : 1;
    ClusterLoadAssignment.Builder assignment = ClusterLoadAssignment.newBuilder().setClusterName(name);
    for (Map.Entry<String, Map<Long, List<Instance>>> cluster : groups.entrySet()) {
      for (Map.Entry<Long, List<Instance>> group : cluster.getValue().entrySet()) {
        long w = group.getKey();
        long total = w * group.getValue().size();
        LocalityLbEndpoints.Builder locality = LocalityLbEndpoints.newBuilder()
            .setLocality(Locality.newBuilder().setZone(cluster.getKey()).setSubZone("weight-" + w))
            .setLoadBalancingWeight(UInt32Value.of((int) (scale == 1 ? total : Math.max(1, (long) (total * scale)))));
        for (Instance i : group.getValue()) {
          locality.addLbEndpoints(LbEndpoint.newBuilder().setHealthStatus(HealthStatus.HEALTHY)
              .setLoadBalancingWeight(UInt32Value.of((int) w))
              .setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setSocketAddress(
                  SocketAddress.newBuilder().setAddress(i.ip()).setPortValue(i.port())))));
        }
        assignment.addEndpoints(locality);
      }
    }
    return assignment.build();
  }

  /**
   * An xDS weight from an instance weight (0..10000): the weight × 100 rounded half up (1.0 → 100,
   * 0.5 → 50, 10000 → 1,000,000), at least 1 for any positive weight; 0 for weight 0, which is not
   * sent.
   */
  static long weight(double weight) {
    if (!(weight > 0)) {
      return 0;
    }
    return Math.max(1, Math.round(weight * 100));
  }
}
