package io.roster.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.proto.v1.HealthCheckType;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.UpdateInstanceRequest;
import io.roster.proto.v1.UpdateServiceRequest;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.Registry;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * GET /roster/v1/admin/backup on one server, {@code --restore} on another: settings (health checks
 * included), persistent instances and holds come back as they were; a server that already holds
 * durable state keeps it; a file that is not a backup refuses the start, naming it.
 */
class BackupTest {

  private static final ServiceKey DB = ServiceKey.of("", "", "db");

  @RegisterExtension
  final LoopbackServer source = LoopbackServer.withDefaults();
  @RegisterExtension
  final LoopbackServer target = LoopbackServer.withDefaults().startedByTest();

  @TempDir Path dir;

  private RegistryGrpc.RegistryBlockingStub registry() {
    return RegistryGrpc.newBlockingStub(source.channel()).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private Path backup() throws Exception {
    var r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + source.server().httpPort() + "/roster/v1/admin/backup")).timeout(TestTime.seconds(10)).build(),
        BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    Path file = dir.resolve("roster-backup.json");
    Files.writeString(file, r.body());
    return file;
  }

  @Test
  void aBackupRestoresSettingsPersistentInstancesAndHoldsIntoAnEmptyServer() throws Exception {
    for (int port = 5432; port < 5442; port++) {
      registry().registerInstance(RegisterInstanceRequest.newBuilder().setService(TestSession.key("db"))
          .setInstance(Instance.newBuilder().setIp("10.0.0.1").setPort(port).putMetadata("role", "replica")).build());
    }
    registry().updateService(UpdateServiceRequest.newBuilder().setService(TestSession.key("db"))
        .setProtectThreshold(0.3).putMetadata("team", "data").addHealthChecks(io.roster.proto.v1.HealthCheck
            .newBuilder().setType(HealthCheckType.HEALTH_CHECK_TYPE_NONE)).build());
    // An operator's hold (the Nacos API's enabled=false), and an instance taken out of traffic by the Roster API.
    var held = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + source.server().httpPort() + "/nacos/v1/ns/instance?serviceName=db&ip=10.0.0.1&port=5433&enabled=false"))
        .PUT(HttpRequest.BodyPublishers.noBody()).timeout(TestTime.seconds(10)).build(), BodyHandlers.ofString());
    assertThat(held.statusCode()).as(held.body()).isEqualTo(200);
    registry().updateInstance(UpdateInstanceRequest.newBuilder().setService(TestSession.key("db")).setIp("10.0.0.1")
        .setPort(5434).setEnabled(false).build());
    // An ephemeral instance is not durable state: not in the backup.
    TestSession provider = source.open().hello("provider");
    provider.register("api", "10.0.0.9", 8080);
    Registry from = source.server().registry();
    Path file = backup();
    assertThat(Files.readString(file)).contains("\"persistent\"").doesNotContain("10.0.0.9");

    target.start(b -> b.restore(file));
    Registry to = target.server().registry();
    assertThat(to.settings(DB)).isEqualTo(from.settings(DB));
    assertThat(to.settings(DB).check("DEFAULT")).isEqualTo(HealthCheck.NONE);
    assertThat(to.serviceImage(DB).registrations()).hasSize(10)
        .allSatisfy(h -> assertThat(h.owner()).isEqualTo(Owner.PERSISTENT));
    for (var h : from.serviceImage(DB).registrations()) {
      assertThat(to.instance(DB, h.instance().key())).isEqualTo(h.instance());
    }
    InstanceKey hold = new InstanceKey("10.0.0.1", 5433, "DEFAULT");
    assertThat(from.held(DB, hold)).isTrue();
    assertThat(to.held(DB, hold)).isTrue();
    assertThat(to.instance(DB, hold).enabled()).isFalse();
    assertThat(to.instance(DB, new InstanceKey("10.0.0.1", 5434, "DEFAULT")).enabled()).isFalse();
  }

  @Test
  void aServerThatHoldsDurableStateKeepsItAndABadFileRefusesTheStart() throws Exception {
    registry().registerInstance(RegisterInstanceRequest.newBuilder().setService(TestSession.key("db"))
        .setInstance(Instance.newBuilder().setIp("10.0.0.1").setPort(5432)).build());
    Path file = backup();
    Path data = dir.resolve("data");
    target.start(b -> b.dataDir(data));
    RegistryGrpc.newBlockingStub(target.channel()).withDeadlineAfter(10, TimeUnit.SECONDS).registerInstance(
        RegisterInstanceRequest.newBuilder().setService(TestSession.key("other"))
            .setInstance(Instance.newBuilder().setIp("10.0.0.2").setPort(80)).build());
    target.close();
    target.start(b -> b.dataDir(data).restore(file));
    assertThat(target.server().registry().serviceImage(DB)).as("not restored over existing state").isNull();
    assertThat(target.server().registry().serviceImage(ServiceKey.of("", "", "other")).registrations()).hasSize(1);
    target.close();

    Path bad = dir.resolve("not-a-backup.json");
    Files.writeString(bad, "{\"format\": 1, \"facts\": [{\"persistent\": {\"service\": {\"namespace\": \"public\", "
        + "\"group\": \"DEFAULT_GROUP\", \"name\": \"db\"}, "
        + "\"key\": {\"ip\": \"10.0.0.1\", \"port\": 70000}, \"instance\": {\"ip\": \"10.0.0.1\", \"port\": 70000}}}]}");
    assertThatThrownBy(() -> target.start(b -> b.restore(bad))).hasMessageContaining(bad.toString())
        .hasMessageContaining("fact 1 is invalid").hasMessageContaining("instance.port");
    Path newer = dir.resolve("newer.json");
    Files.writeString(newer, "{\"format\": " + (Backup.FORMAT + 1) + "}");
    assertThatThrownBy(() -> target.start(b -> b.restore(newer))).hasMessageContaining("format " + (Backup.FORMAT + 1));
  }

  @Test
  void aPersistentInstanceUnderAKeyThatIsNotItsOwnRefusesTheWholeBackup() throws Exception {
    Path data = dir.resolve("data");
    Path bad = dir.resolve("mismatched.json");
    Files.writeString(bad, "{\"format\": 1, \"facts\": [{\"settings\": {\"service\": {\"namespace\": \"public\", "
        + "\"group\": \"DEFAULT_GROUP\", \"name\": \"db\"}, \"protectThreshold\": 0.5}}, "
        + "{\"persistent\": {\"service\": {\"namespace\": \"public\", \"group\": \"DEFAULT_GROUP\", \"name\": \"db\"}, "
        + "\"key\": {\"ip\": \"10.0.0.1\", \"port\": 5432, \"cluster\": \"DEFAULT\"}, "
        + "\"instance\": {\"ip\": \"10.0.0.1\", \"port\": 5433, \"cluster\": \"DEFAULT\"}}}]}");
    assertThatThrownBy(() -> target.start(b -> b.dataDir(data).restore(bad))).hasMessageContaining(bad.toString())
        .hasMessageContaining("fact 2 is invalid").hasMessageContaining("db")
        .hasMessageContaining("key.port 5432 but instance.port 5433");
    target.start(b -> b.dataDir(data));
    assertThat(target.server().registry().settings(DB)).as("nothing of the backup applied")
        .isEqualTo(io.roster.server.registry.ServiceSettings.DEFAULT);
  }
}
