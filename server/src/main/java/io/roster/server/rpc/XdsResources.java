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
import java.util.Set;

/**
 * The xDS resources {@link XdsService} sends for a name (docs/xds.md, decisions 71 and 100): the
 * listener with its route inline, the EDS cluster, and the assignment.
 *
 * <p>The assignment has <b>one locality per instance</b>, weighted by the instance's weight: gRPC
 * clients balance between localities by their weights (weighted_target) but round-robin over the
 * endpoints of one locality whatever their weights. A locality's zone is the instance's Roster
 * cluster and its sub-zone the instance's {@code ip:port}; all are priority 0. Stateless: every
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
   * The service's healthy, enabled instances of positive weight, each a locality of its own whose
   * weight is {@link #weight} of the instance's, scaled down when their sum would pass {@link
   * #MAX_WEIGHT_SUM}.
   */
  static ClusterLoadAssignment assignment(String name, ServiceSnapshot state) {
    List<Instance> served = new ArrayList<>();
    long sum = 0;
    for (Instance i : state.view(Set.of(), true).instances()) {
      long w = weight(i.weight());
      if (w > 0) {
        served.add(i);
        sum += w;
      }
    }
    // Scaled into MAX_WEIGHT_SUM less one per locality, so that rounding each up to 1 cannot pass it.
    double scale = sum > MAX_WEIGHT_SUM ? (double) (MAX_WEIGHT_SUM - served.size()) / sum : 1;
    ClusterLoadAssignment.Builder assignment = ClusterLoadAssignment.newBuilder().setClusterName(name);
    for (Instance i : served) {
      long w = weight(i.weight());
      int scaled = (int) (scale == 1 ? w : Math.max(1, (long) (w * scale)));
      assignment.addEndpoints(LocalityLbEndpoints.newBuilder()
          .setLocality(Locality.newBuilder().setZone(i.cluster()).setSubZone(i.ip() + ":" + i.port()))
          .setLoadBalancingWeight(UInt32Value.of(scaled))
          .addLbEndpoints(LbEndpoint.newBuilder().setHealthStatus(HealthStatus.HEALTHY)
              .setLoadBalancingWeight(UInt32Value.of(scaled))
              .setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setSocketAddress(
                  SocketAddress.newBuilder().setAddress(i.ip()).setPortValue(i.port()))))));
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
