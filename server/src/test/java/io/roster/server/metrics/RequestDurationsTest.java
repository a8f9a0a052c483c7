package io.roster.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.roster.proto.v1.ListServicesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every request counted in {@code roster_requests_total} is also one observation of {@code
 * roster_request_duration_seconds} under the same protocol and type, over real sockets: session
 * frames, Roster's gRPC calls, Roster's and Nacos's HTTP routes and a path under none.
 */
class RequestDurationsTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults();

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TestTime.seconds(10)).build();

  @Test
  void eachCountedRequestIsObservedOnceUnderItsProtocolAndType() throws Exception {
    TestSession provider = loopback.session("provider");
    assertThat(provider.register("orders", "10.0.0.1", 80).getOk()).isTrue();
    provider.subscribe("orders");
    provider.awaitPush("orders", s -> s.getInstancesCount() == 1);
    RegistryGrpc.newBlockingStub(loopback.channel()).listServices(ListServicesRequest.getDefaultInstance());
    for (String path : new String[] {"/metrics", "/nacos/v1/ns/instance/list?serviceName=orders", "/no/such/path",
        "/roster/v1/admin/members"}) {
      http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + loopback.server().httpPort() + path))
          .timeout(TestTime.seconds(10)).build(), BodyHandlers.discarding());
    }

    Map<String, Double> counted = new HashMap<>();
    for (DataPointSnapshot p : metric("roster_requests").getDataPoints()) {
      counted.merge(p.getLabels().get("protocol") + " " + p.getLabels().get("type"),
          ((CounterSnapshot.CounterDataPointSnapshot) p).getValue(), Double::sum);
    }
    Map<String, Double> observed = new HashMap<>();
    HistogramSnapshot durations = (HistogramSnapshot) metric("roster_request_duration_seconds");
    for (HistogramSnapshot.HistogramDataPointSnapshot p : durations.getDataPoints()) {
      observed.put(p.getLabels().get("protocol") + " " + p.getLabels().get("type"), (double) p.getCount());
      ClassicHistogramBuckets buckets = p.getClassicBuckets();
      assertThat(buckets.getUpperBound(0)).isEqualTo(0.0005);
      assertThat(buckets.getUpperBound(buckets.size() - 2)).isEqualTo(10);
    }
    assertThat(observed).containsKeys("roster hello", "roster register", "roster subscribe",
        "roster Registry/ListServices", "http /metrics", "http unknown", "http /roster/v1/admin",
        "nacos-http /nacos/v1/ns/instance/list");
    assertThat(observed).isEqualTo(counted);
  }

  private MetricSnapshot metric(String name) {
    for (MetricSnapshot s : loopback.server().metrics().prometheus().scrape()) {
      if (s.getMetadata().getPrometheusName().equals(name)) {
        return s;
      }
    }
    throw new AssertionError("no metric " + name);
  }
}
