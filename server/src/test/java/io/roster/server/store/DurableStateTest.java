package io.roster.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.GetServiceResponse;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.UpdateServiceRequest;
import io.roster.server.RosterServer;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A standalone server with a data directory keeps the operator's state across a restart: service
 * settings, and holds of instances whose owners register them again. A hold ends with its
 * instance, before or after the restart, as decision 40 says.
 */
class DurableStateTest {

  private static final ServiceKey ORDERS = new ServiceKey("public", "DEFAULT_GROUP", "orders");

  @TempDir Path data;

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.httpPort(0)).startedByTest();

  private final HttpClient http = HttpClient.newHttpClient();

  private RosterServer start(Duration warmUp) {
    return loopback.start(b -> b.dataDir(data).warmUp(warmUp));
  }

  /**
   * Stops the server as SIGTERM does, while its clients are still connected (the fixture's own
   * close would hang up the clients first, and a session that ends while the server runs takes
   * its held instance, and the hold, with it).
   */
  private void stop() {
    loopback.server().close();
    loopback.close();
  }

  /** {@link #stop}, then the same server again on the same data directory. */
  private void restart() {
    loopback.server().close();
    loopback.restart();
  }

  private RegistryGrpc.RegistryBlockingStub registry() {
    return RegistryGrpc.newBlockingStub(loopback.channel()).withDeadlineAfter(TestTime.seconds(10).toMillis(),
        TimeUnit.MILLISECONDS);
  }

  private void hold(String ip, boolean enabled) throws Exception {
    var r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + loopback.server().httpPort()
        + "/nacos/v1/ns/instance?serviceName=orders&ip=" + ip + "&port=80&enabled=" + enabled))
        .PUT(HttpRequest.BodyPublishers.noBody()).build(), BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
  }

  private Instance stored(String ip) {
    Instance i = loopback.server().registry().instance(ORDERS, new InstanceKey(ip, 80, "DEFAULT"));
    assertThat(i).as(ip + " registered").isNotNull();
    return i;
  }

  private TestSession provider(String... ips) {
    TestSession s = loopback.session("provider-" + String.join("-", ips));
    for (String ip : ips) {
      assertThat(s.register("orders", ip, 80).getOk()).isTrue();
    }
    return s;
  }

  @Test
  void settingsAndHoldsOutliveARestart() throws Exception {
    start(Duration.ofSeconds(30));
    TestSession before = provider("10.0.0.1", "10.0.0.2");
    registry().updateService(UpdateServiceRequest.newBuilder().setService(TestSession.key("orders"))
        .setProtectThreshold(0.5).putMetadata("team", "payments").build());
    hold("10.0.0.1", false);
    assertThat(stored("10.0.0.1").enabled()).isFalse();

    restart(); // as SIGTERM does, and start again on the same data directory
    GetServiceResponse settings = registry().getService(GetServiceRequest.newBuilder()
        .setService(TestSession.key("orders")).build());
    assertThat(settings.getProtectThreshold()).isEqualTo(0.5);
    assertThat(settings.getMetadataMap()).isEqualTo(Map.of("team", "payments"));

    // The provider comes back and registers both again: the held one stays out of traffic.
    provider("10.0.0.1", "10.0.0.2");
    assertThat(stored("10.0.0.1").enabled()).isFalse();
    assertThat(stored("10.0.0.2").enabled()).isTrue();
    assertThat(loopback.server().registry().held(ORDERS, new InstanceKey("10.0.0.1", 80, "DEFAULT"))).isTrue();

    // Enabled again: that too outlives a restart.
    hold("10.0.0.1", true);
    restart();
    provider("10.0.0.1");
    assertThat(stored("10.0.0.1").enabled()).isTrue();
    before.close();
  }

  @Test
  void aHoldEndsWithItsInstance() throws Exception {
    start(Duration.ofSeconds(30));
    TestSession p = provider("10.0.0.1");
    hold("10.0.0.1", false);
    p.close(); // the instance leaves the registry, and its hold with it
    await().atMost(TestTime.seconds(10)).until(() ->
        loopback.server().registry().instance(ORDERS, new InstanceKey("10.0.0.1", 80, "DEFAULT")) == null);

    loopback.restart();
    provider("10.0.0.1");
    assertThat(stored("10.0.0.1").enabled()).as("a new process at the old address is not held").isTrue();
  }

  @Test
  void aHoldWhoseInstanceDoesNotComeBackWithinTheWarmUpEnds() throws Exception {
    start(Duration.ofSeconds(30));
    provider("10.0.0.1");
    hold("10.0.0.1", false);

    stop();
    RosterServer server = start(Duration.ofMillis(300));
    await().atMost(TestTime.seconds(10)).until(() -> server.warmUp().isWarm());
    provider("10.0.0.1");
    assertThat(stored("10.0.0.1").enabled()).as("the hold read back ended with the warm-up").isTrue();
    restart();
    provider("10.0.0.1");
    assertThat(stored("10.0.0.1").enabled()).as("ended on disk too").isTrue();
  }

  @Test
  void persistentInstancesOutliveRestartsUntilDeregistered() throws Exception {
    start(Duration.ofSeconds(30));
    var db = io.roster.proto.v1.Instance.newBuilder().setIp("10.0.0.5").setPort(80).putMetadata("role", "primary");
    var registered = registry().registerInstance(io.roster.proto.v1.RegisterInstanceRequest.newBuilder()
        .setService(TestSession.key("orders")).setInstance(db).build()).getInstance();
    assertThat(registered.getEphemeral()).isFalse();
    assertThat(registered.getHealthy()).isTrue();
    registry().registerInstance(io.roster.proto.v1.RegisterInstanceRequest.newBuilder()
        .setService(TestSession.key("orders")).setInstance(db.clone().setIp("10.0.0.6")).build());
    registry().updateInstance(io.roster.proto.v1.UpdateInstanceRequest.newBuilder().setService(TestSession.key("orders"))
        .setIp("10.0.0.6").setPort(80).setHealthy(false).build());
    hold("10.0.0.5", false);

    restart();
    assertThat(stored("10.0.0.5").ephemeral()).isFalse();
    assertThat(stored("10.0.0.5").metadata()).containsEntry("role", "primary");
    assertThat(stored("10.0.0.5").enabled()).as("still held").isFalse();
    assertThat(stored("10.0.0.6").healthy()).as("health set by the API is kept").isFalse();
    assertThat(registry().deregisterInstance(io.roster.proto.v1.DeregisterInstanceRequest.newBuilder()
        .setService(TestSession.key("orders")).setIp("10.0.0.6").setPort(80).build()).getDeregistered()).isTrue();
    assertThat(registry().deregisterInstance(io.roster.proto.v1.DeregisterInstanceRequest.newBuilder()
        .setService(TestSession.key("orders")).setIp("10.0.0.6").setPort(80).build()).getDeregistered())
        .as("a second delete finds nothing, and says so without an error").isFalse();
    restart();
    assertThat(loopback.server().registry().instance(ORDERS, new InstanceKey("10.0.0.6", 80, "DEFAULT"))).isNull();
    assertThat(stored("10.0.0.5").enabled()).isFalse();
  }

  @Test
  void aServiceIsEphemeralOrPersistentNeverBoth() {
    start(Duration.ofSeconds(30));
    provider("10.0.0.1");
    var refused = org.assertj.core.api.Assertions.catchThrowableOfType(io.grpc.StatusRuntimeException.class,
        () -> registry().registerInstance(io.roster.proto.v1.RegisterInstanceRequest.newBuilder()
            .setService(TestSession.key("orders")).setInstance(io.roster.proto.v1.Instance.newBuilder()
                .setIp("10.0.0.9").setPort(80)).build()));
    assertThat(refused.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.FAILED_PRECONDITION);
    assertThat(refused.getStatus().getDescription()).contains("has ephemeral instances")
        .contains("either ephemeral or persistent");
    var ephemeral = org.assertj.core.api.Assertions.catchThrowableOfType(io.grpc.StatusRuntimeException.class,
        () -> registry().deregisterInstance(io.roster.proto.v1.DeregisterInstanceRequest.newBuilder()
            .setService(TestSession.key("orders")).setIp("10.0.0.1").setPort(80).build()));
    assertThat(ephemeral.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.FAILED_PRECONDITION);
    assertThat(ephemeral.getStatus().getDescription()).contains("is ephemeral, held by session:");
    assertThat(stored("10.0.0.1").enabled()).as("nothing changed").isTrue();
  }

  @Test
  void withoutADataDirectoryNothingIsKept() throws Exception {
    loopback.start(b -> b.dataDir(null));
    registry().updateService(UpdateServiceRequest.newBuilder().setService(TestSession.key("orders"))
        .setProtectThreshold(0.5).build());
    assertThat(registry().getService(GetServiceRequest.newBuilder().setService(TestSession.key("orders")).build())
        .getProtectThreshold()).isEqualTo(0.5);
    loopback.restart();
    // No instances and no settings: a service the server does not know.
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> registry().getService(GetServiceRequest.newBuilder()
        .setService(TestSession.key("orders")).build())).isInstanceOfSatisfying(io.grpc.StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.NOT_FOUND));
  }
}
