package io.roster.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.roster.proto.nacos.Metadata;
import io.roster.proto.nacos.Payload;
import io.roster.proto.nacos.RequestGrpc;
import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.ListMembersRequest;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestTime;
import io.roster.server.testing.process.Ports;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/**
 * A cluster member that has not caught up with the log serves nothing, on every port alike, and
 * every status route says it is not ready (decision 86): a member started with a second member
 * that never answers, so that the group has no leader and it never catches up. Over real sockets.
 */
class NotServingMemberTest {

  private Path data;

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.dnsPort(0).httpPort(0)).startedByTest();

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TestTime.seconds(10)).build();

  @AfterEach
  void deleteData() throws Exception {
    loopback.close();
    if (data != null) {
      try (var files = Files.walk(data)) {
        files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
  }

  private void startAMemberThatCannotCatchUp() throws Exception {
    data = Files.createTempDirectory("roster-not-serving");
    int peerPort = Ports.free();
    int absent = Ports.free();
    loopback.start(b -> b.dataDir(data).peerPort(peerPort).peerTls(false)
        .members(List.of("127.0.0.1:" + peerPort, "127.0.0.1:" + absent)));
  }

  private HttpResponse<String> get(String pathAndQuery) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + loopback.server().httpPort()
        + pathAndQuery)).timeout(TestTime.seconds(10)).GET().build(), BodyHandlers.ofString());
  }

  @Test
  void everyReadRouteRefusesNamingWhyAndEveryStatusRouteSaysNotReady() throws Exception {
    startAMemberThatCannotCatchUp();
    String why = "catching up";

    // The status routes.
    assertThat(HealthGrpc.newBlockingStub(loopback.channel()).withDeadlineAfter(10, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.NOT_SERVING);
    HttpResponse<String> status = get("/nacos/v1/ns/operator/metrics");
    assertThat(status.statusCode()).isEqualTo(200);
    assertThat(status.body()).contains("\"status\":\"DOWN\"");

    // The HTTP reads: the Nacos v1 lists, the Nacos admin API, Roster's admin API, discovery.
    for (String route : List.of("/nacos/v1/ns/instance/list?serviceName=orders", "/nacos/v1/ns/service/list",
        "/nacos/v3/admin/ns/service/list", "/roster/v1/admin/members",
        "/roster/v1/admin/namespaces", "/roster/v1/prometheus/sd")) {
      HttpResponse<String> r = get(route);
      assertThat(r.statusCode()).as(route + ": " + r.body()).isEqualTo(503);
      assertThat(r.body()).as(route).contains(why);
    }

    // Roster's gRPC queries and admin.
    assertThatThrownBy(() -> RegistryGrpc.newBlockingStub(loopback.channel()).withDeadlineAfter(10, TimeUnit.SECONDS)
        .queryInstances(QueryInstancesRequest.newBuilder().setService(ServiceKey.newBuilder().setName("orders"))
            .build()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
          assertThat(e.getStatus().getDescription()).contains(why);
        });
    assertThatThrownBy(() -> AdminGrpc.newBlockingStub(loopback.channel()).withDeadlineAfter(10, TimeUnit.SECONDS)
        .listMembers(ListMembersRequest.getDefaultInstance()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));

    // Nacos gRPC: a client's first step is refused, naming why, so it tries its next server.
    Payload check = RequestGrpc.newBlockingStub(loopback.channel()).withDeadlineAfter(10, TimeUnit.SECONDS)
        .request(Payload.newBuilder().setMetadata(Metadata.newBuilder().setType("ServerCheckRequest"))
            .setBody(Any.newBuilder().setValue(ByteString.copyFrom("{\"headers\":{}}", StandardCharsets.UTF_8)))
            .build());
    String checked = check.getBody().getValue().toStringUtf8();
    assertThat(check.getMetadata().getType()).as(checked).isEqualTo("ErrorResponse");
    assertThat(checked).contains(why);

    // xDS: the stream ends at once, UNAVAILABLE naming why.
    CompletableFuture<Throwable> ended = new CompletableFuture<>();
    var requests = AggregatedDiscoveryServiceGrpc.newStub(loopback.channel()).streamAggregatedResources(
        new StreamObserver<DiscoveryResponse>() {
          @Override
          public void onNext(DiscoveryResponse r) {
            ended.completeExceptionally(new AssertionError("served: " + r));
          }

          @Override
          public void onError(Throwable t) {
            ended.complete(t);
          }

          @Override
          public void onCompleted() {
            ended.completeExceptionally(new AssertionError("completed without an error"));
          }
        });
    requests.onNext(DiscoveryRequest.newBuilder()
        .setTypeUrl("type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment")
        .addResourceNames("orders").build());
    Status xds = Status.fromThrowable(ended.get(TestTime.seconds(10).toMillis(), TimeUnit.MILLISECONDS));
    assertThat(xds.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(xds.getDescription()).contains(why);

    // DNS: SERVFAIL for every name of the zone, so that resolvers ask elsewhere and cache nothing.
    for (String name : List.of("orders.roster.", "roster.")) {
      Message q = Message.newQuery(Record.newRecord(Name.fromString(name), Type.A, org.xbill.DNS.DClass.IN));
      byte[] wire = q.toWire();
      try (DatagramSocket s = new DatagramSocket()) {
        s.setSoTimeout((int) TestTime.seconds(10).toMillis());
        s.send(new DatagramPacket(wire, wire.length, InetAddress.getLoopbackAddress(), loopback.server().dnsPort()));
        byte[] buf = new byte[4096];
        DatagramPacket p = new DatagramPacket(buf, buf.length);
        s.receive(p);
        assertThat(new Message(java.util.Arrays.copyOf(buf, p.getLength())).getRcode()).as(name)
            .isEqualTo(Rcode.SERVFAIL);
      }
    }
  }
}
