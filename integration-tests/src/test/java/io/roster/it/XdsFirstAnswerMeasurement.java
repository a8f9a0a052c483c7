package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * A measurement, not a test (docs/benchmarks.md, "xDS: the first ADS stream of a fresh server"):
 * five fresh server processes, and on each, as soon as it is SERVING, an ADS stream asking for a
 * listener, a cluster and an assignment one after the other as grpc-java does; how long the first
 * answer and the whole exchange took, then the same on a second stream. Runs only with {@code
 * -Droster.measure.xds=true}; prints its figures.
 */
@EnabledIfSystemProperty(named = "roster.measure.xds", matches = "true")
class XdsFirstAnswerMeasurement {

  private static final String LISTENER = "type.googleapis.com/envoy.config.listener.v3.Listener";
  private static final String CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
  private static final String ENDPOINTS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
  private static final int RUNS = 5;

  @Test
  void firstAdsExchangeOfAFreshServer() throws Exception {
    List<String> lines = new ArrayList<>();
    for (int run = 1; run <= RUNS; run++) {
      try (ServerProcess roster = ServerProcess.start("127.0.0.1", Ports.free())) {
        ManagedChannel channel = Grpc.newChannelBuilder(roster.address(), InsecureChannelCredentials.create()).build();
        try {
          double[] first = exchange(channel);
          double[] second = exchange(channel);
          lines.add(String.format(Locale.ROOT, "run %d: first stream: first answer %.1f ms, LDS+CDS+EDS %.1f ms;"
              + " second stream: %.1f ms, %.1f ms", run, first[0], first[1], second[0], second[1]));
        } finally {
          channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
      }
    }
    lines.forEach(l -> System.out.println("XDS-FIRST " + l));
  }

  /** One stream: LDS, then CDS, then EDS for one name; ms to the first answer and to the last. */
  private static double[] exchange(ManagedChannel channel) throws InterruptedException {
    BlockingQueue<DiscoveryResponse> answers = new LinkedBlockingQueue<>();
    long start = System.nanoTime();
    StreamObserver<DiscoveryRequest> requests = AggregatedDiscoveryServiceGrpc.newStub(channel)
        .streamAggregatedResources(new StreamObserver<>() {
          @Override
          public void onNext(DiscoveryResponse r) {
            answers.add(r);
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        });
    double firstMs = 0;
    for (String type : List.of(LISTENER, CLUSTER, ENDPOINTS)) {
      requests.onNext(DiscoveryRequest.newBuilder().setTypeUrl(type).addResourceNames("measured").build());
      DiscoveryResponse r = answers.poll(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
      assertThat(r).as("an answer to " + type).isNotNull();
      if (type.equals(LISTENER)) {
        firstMs = (System.nanoTime() - start) / 1e6;
      }
    }
    double allMs = (System.nanoTime() - start) / 1e6;
    requests.onCompleted();
    return new double[] {firstMs, allMs};
  }
}
