package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.GetServiceResponse;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.proto.v1.UpdateServiceRequest;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A standalone server process on a data directory (docs/persistence.md), stopped with SIGTERM or
 * killed with -9 and started again: the service's settings, the operator's hold and a persistent
 * instance are there, and the provider that reconnects finds its held instance still out of traffic. A damaged journal
 * keeps the server from starting, with a message naming the file.
 */
class StandaloneRestartTest {

  private static final ServiceKey ORDERS = ServiceKey.newBuilder().setName("orders").build();

  @TempDir Path data;

  private final Closer closing = new Closer();
  private final HttpClient http = HttpClient.newHttpClient();
  private final int port = Ports.free();
  private final int httpPort = Ports.free();

  @AfterEach
  void stop() {
    closing.close();
  }

  private ServerProcess start() {
    ServerProcess s = ServerProcess.start("127.0.0.1", port, "--data-dir", data.toString(), "--http-port",
        Integer.toString(httpPort), "--warm-up", "30s");
    closing.add(s);
    return s;
  }

  private RegistryGrpc.RegistryBlockingStub registry() {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    closing.add(() -> {
      ch.shutdownNow();
      ch.awaitTermination(5, TimeUnit.SECONDS);
    });
    return RegistryGrpc.newBlockingStub(ch).withDeadlineAfter(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
  }

  private GetServiceResponse service() {
    return registry().getService(GetServiceRequest.newBuilder().setService(ORDERS).build());
  }

  private List<String> visible() {
    return registry().queryInstances(QueryInstancesRequest.newBuilder().setService(ORDERS).build()).getServiceInfo()
        .getInstancesList().stream().map(i -> i.getIp()).sorted().toList();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"SIGTERM", "kill -9"})
  void settingsAndHoldsOutliveTheProcess(String how) throws Exception {
    ServerProcess server = start();
    RosterClient provider = RosterClient.builder().serverAddresses(server.address()).clientName("orders-provider")
        .requestTimeout(Timing.seconds(15)).build();
    closing.add(provider);
    provider.registerInstance("orders", Instance.of("10.0.0.1", 80));
    provider.registerInstance("orders", Instance.of("10.0.0.2", 80));
    registry().updateService(UpdateServiceRequest.newBuilder().setService(ORDERS).setProtectThreshold(0.5)
        .putMetadata("team", "payments").build());
    var held = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort
        + "/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.1&port=80&enabled=false"))
        .PUT(HttpRequest.BodyPublishers.noBody()).build(), BodyHandlers.ofString());
    assertThat(held.statusCode()).as(held.body()).isEqualTo(200);
    assertThat(visible()).containsExactly("10.0.0.2");
    // A persistent instance, as curl registers it: nobody registers it again after the restart.
    var persistent = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort
        + "/nacos/v1/ns/instance?serviceName=orders-db&ip=10.0.0.9&port=5432&ephemeral=false"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), BodyHandlers.ofString());
    assertThat(persistent.statusCode()).as(persistent.body()).isEqualTo(200);

    if (how.equals("SIGTERM")) {
      server.stop();
    } else {
      server.kill9();
    }
    start();

    assertThat(registry().queryInstances(QueryInstancesRequest.newBuilder().setService(ServiceKey.newBuilder()
        .setName("orders-db")).build()).getServiceInfo().getInstancesList()).singleElement()
        .satisfies(i -> assertThat(i.getIp() + ":" + i.getPort() + " ephemeral=" + i.getEphemeral())
            .isEqualTo("10.0.0.9:5432 ephemeral=false"));
    assertThat(service().getProtectThreshold()).isEqualTo(0.5);
    assertThat(service().getMetadataMap()).isEqualTo(Map.of("team", "payments"));
    // The provider reconnects and registers both again; the held one stays out of traffic.
    await().atMost(Timing.seconds(30)).untilAsserted(() -> assertThat(service().getInstanceCount()).isEqualTo(2));
    assertThat(visible()).containsExactly("10.0.0.2");
  }

  @Test
  void aDamagedJournalKeepsTheServerFromStarting() throws Exception {
    ServerProcess server = start();
    registry().updateService(UpdateServiceRequest.newBuilder().setService(ORDERS).setProtectThreshold(0.5).build());
    registry().updateService(UpdateServiceRequest.newBuilder().setService(ORDERS).setProtectThreshold(0.25).build());
    server.stop();
    Path journal = data.resolve("standalone/journal");
    byte[] bytes = Files.readAllBytes(journal);
    int first = 24; // the journal's header: magic word, format, generation, checksum
    bytes[first + 8 + 3] ^= 0x20; // inside the first of two records
    Files.write(journal, bytes);

    ServerProcess refused = ServerProcess.launch("127.0.0.1", port, "--data-dir", data.toString(), "--http-port",
        Integer.toString(httpPort));
    closing.add(refused);
    assertThat(refused.process.waitFor(Timing.seconds(60).toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(refused.process.exitValue()).isEqualTo(1);
    assertThat(refused.output()).contains(journal.toString() + " is damaged: record 1 at byte " + first + " of ")
        .contains("fails its checksum").contains("check --data-dir").contains("restore a backup");
    assertThat(Files.readAllBytes(journal)).as("left as it was").isEqualTo(bytes);
  }

  @Test
  void aSecondServerOnTheSameDataDirectoryIsRefused() throws Exception {
    start();
    ServerProcess second = ServerProcess.launch("127.0.0.1", Ports.free(), "--data-dir", data.toString());
    closing.add(second);
    assertThat(second.process.waitFor(Timing.seconds(60).toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(second.process.exitValue()).isEqualTo(1);
    assertThat(second.output()).contains("is in use by another Roster process");
  }
}
