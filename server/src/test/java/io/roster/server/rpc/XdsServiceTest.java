package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.rpc.Status;
import io.grpc.stub.StreamObserver;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.grpc.xds.shaded.io.envoyproxy.envoy.config.listener.v3.Listener;
import io.grpc.xds.shaded.io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The ADS service over a real socket (docs/xds.md): what a listener, cluster and assignment
 * hold, an ACK taken silently, a NACK not answered with the same version, and a change pushed.
 */
class XdsServiceTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults();

  private final BlockingQueue<DiscoveryResponse> responses = new LinkedBlockingQueue<>();

  private StreamObserver<DiscoveryRequest> stream() {
    return AggregatedDiscoveryServiceGrpc.newStub(loopback.channel()).streamAggregatedResources(new StreamObserver<>() {
      @Override
      public void onNext(DiscoveryResponse r) {
        responses.add(r);
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {}
    });
  }

  private DiscoveryResponse next() throws InterruptedException {
    DiscoveryResponse r = responses.poll(TestTime.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
    assertThat(r).as("a response").isNotNull();
    return r;
  }

  @Test
  void listenerClusterAndAssignmentThenAChangeAndNoAnswerToANack() throws Exception {
    TestSession provider = loopback.session("provider");
    assertThat(provider.register("orders", "10.0.0.1", 8080).getOk()).isTrue();
    StreamObserver<DiscoveryRequest> requests = stream();

    requests.onNext(DiscoveryRequest.newBuilder().setTypeUrl(XdsService.LISTENER).addResourceNames("orders").build());
    Listener listener = next().getResources(0).unpack(Listener.class);
    assertThat(listener.getName()).isEqualTo("orders");
    HttpConnectionManager manager = listener.getApiListener().getApiListener().unpack(HttpConnectionManager.class);
    assertThat(manager.getRouteConfig().getVirtualHosts(0).getRoutes(0).getRoute().getCluster()).isEqualTo("orders");

    requests.onNext(DiscoveryRequest.newBuilder().setTypeUrl(XdsService.CLUSTER).addResourceNames("orders").build());
    Cluster cluster = next().getResources(0).unpack(Cluster.class);
    assertThat(cluster.getType()).isEqualTo(Cluster.DiscoveryType.EDS);
    assertThat(cluster.getEdsClusterConfig().getEdsConfig().hasAds()).isTrue();

    requests.onNext(DiscoveryRequest.newBuilder().setTypeUrl(XdsService.ENDPOINTS).addResourceNames("orders").build());
    DiscoveryResponse first = next();
    ClusterLoadAssignment one = first.getResources(0).unpack(ClusterLoadAssignment.class);
    assertThat(one.getEndpoints(0).getLocality().getZone()).isEqualTo("DEFAULT");
    assertThat(one.getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress().getPortValue())
        .isEqualTo(8080);

    // A NACK of it is not answered (the same version would be refused again); an ACK neither.
    requests.onNext(DiscoveryRequest.newBuilder().setTypeUrl(XdsService.ENDPOINTS).addResourceNames("orders")
        .setResponseNonce(first.getNonce()).setErrorDetail(Status.newBuilder().setMessage("refused")).build());
    requests.onNext(DiscoveryRequest.newBuilder().setTypeUrl(XdsService.ENDPOINTS).addResourceNames("orders")
        .setVersionInfo(first.getVersionInfo()).setResponseNonce(first.getNonce()).build());
    // A change is pushed: the next response on the stream is the new assignment.
    assertThat(provider.register("orders", "10.0.0.2", 8081).getOk()).isTrue();
    DiscoveryResponse changed = next();
    assertThat(changed.getTypeUrl()).isEqualTo(XdsService.ENDPOINTS);
    assertThat(changed.getVersionInfo()).isNotEqualTo(first.getVersionInfo());
    assertThat(changed.getResources(0).unpack(ClusterLoadAssignment.class).getEndpoints(0).getLbEndpointsCount())
        .isEqualTo(2);
    requests.onCompleted();
  }

  @Test
  void resourceNamesMapToServices() {
    assertThat(XdsService.service("orders")).isEqualTo(ServiceKey.of("public", "DEFAULT_GROUP", "orders"));
    assertThat(XdsService.service("pay/billing")).isEqualTo(ServiceKey.of("public", "pay", "billing"));
    assertThat(XdsService.service("team/pay/billing")).isEqualTo(ServiceKey.of("team", "pay", "billing"));
    assertThatThrownBy(() -> XdsService.service("a/b/c/d")).isInstanceOf(RegistryException.class)
        .hasMessageContaining("resource_names");
  }
}
