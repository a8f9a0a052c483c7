package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ConnectionInfo;
import io.roster.proto.v1.DeregisterInstance;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.GetServiceResponse;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.ListConnectionsRequest;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.UpdateInstanceRequest;
import io.roster.proto.v1.UpdateServiceRequest;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import io.roster.proto.v1.GetLogLevelsRequest;
import io.roster.proto.v1.LoggerLevel;
import io.roster.proto.v1.SetLogLevelRequest;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Registry updates and Admin listings as docs/protocol.md describes them, over loopback. */
class RegistryAdminTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults();

  private RegistryGrpc.RegistryBlockingStub registry;

  @BeforeEach
  void stub() {
    registry = RegistryGrpc.newBlockingStub(loopback.channel()).withDeadlineAfter(TestTime.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
  }

  private TestSession session(String clientId) {
    return loopback.session(clientId);
  }

  private static void register(TestSession s, String service, String ip, Map<String, String> metadata) {
    assertThat(s.request(ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
        .setService(TestSession.key(service))
        .setInstance(Instance.newBuilder().setIp(ip).setPort(80).putAllMetadata(metadata)))).getOk()).isTrue();
  }

  private GetServiceResponse getService(String service) {
    return registry.getService(GetServiceRequest.newBuilder().setService(TestSession.key(service)).build());
  }

  @Test
  void updateInstanceMergesMetadataOrReplacesIt() {
    register(session("provider"), "meta", "10.0.0.1", Map.of("a", "1", "b", "2"));
    UpdateInstanceRequest.Builder base = UpdateInstanceRequest.newBuilder()
        .setService(TestSession.key("meta")).setIp("10.0.0.1").setPort(80);

    assertThat(registry.updateInstance(base.clone().putMetadata("b", "3").build()).getInstance().getMetadataMap())
        .isEqualTo(Map.of("a", "1", "b", "3"));
    assertThat(registry.updateInstance(base.clone().setReplaceMetadata(true).putMetadata("c", "4").build())
        .getInstance().getMetadataMap()).isEqualTo(Map.of("c", "4"));
    assertThat(registry.updateInstance(base.clone().setReplaceMetadata(true).build())
        .getInstance().getMetadataMap()).as("replaced by nothing").isEmpty();
    assertThat(registry.queryInstances(QueryInstancesRequest.newBuilder().setService(TestSession.key("meta")).build())
        .getServiceInfo().getInstances(0).getMetadataMap()).isEmpty();
  }

  @Test
  void updateServiceMergesMetadataOrReplacesItAndSettingsOutliveTheInstances() {
    TestSession provider = session("provider");
    register(provider, "settled", "10.0.0.1", Map.of());
    UpdateServiceRequest.Builder base = UpdateServiceRequest.newBuilder().setService(TestSession.key("settled"));
    registry.updateService(base.clone().setProtectThreshold(0.5).putMetadata("owner", "pay").putMetadata("tier", "1")
        .build());
    assertThat(registry.updateService(base.clone().putMetadata("tier", "2").build()).getMetadataMap())
        .isEqualTo(Map.of("owner", "pay", "tier", "2"));
    assertThat(registry.updateService(base.clone().setReplaceMetadata(true).putMetadata("only", "x").build())
        .getMetadataMap()).isEqualTo(Map.of("only", "x"));

    assertThat(provider.request(ClientFrame.newBuilder().setDeregister(DeregisterInstance.newBuilder()
        .setService(TestSession.key("settled")).setInstance(Instance.newBuilder().setIp("10.0.0.1").setPort(80))))
        .getOk()).isTrue();

    GetServiceResponse empty = getService("settled");
    assertThat(empty.getInstanceCount()).isZero();
    assertThat(empty.getProtectThreshold()).isEqualTo(0.5);
    assertThat(empty.getMetadataMap()).isEqualTo(Map.of("only", "x"));
    register(provider, "settled", "10.0.0.2", Map.of());
    assertThat(getService("settled").getProtectThreshold()).as("still there for new instances").isEqualTo(0.5);
  }

  @Test
  void getServiceCountsDisabledInstancesWhichQueriesDoNotReturn() {
    TestSession provider = session("provider");
    for (int i = 1; i <= 3; i++) {
      register(provider, "counted", "10.0.0." + i, Map.of());
    }
    registry.updateInstance(UpdateInstanceRequest.newBuilder().setService(TestSession.key("counted"))
        .setIp("10.0.0.2").setPort(80).setEnabled(false).build());

    GetServiceResponse svc = getService("counted");
    assertThat(svc.getInstanceCount()).isEqualTo(3);
    assertThat(svc.getHealthyCount()).isEqualTo(3);
    var visible = registry.queryInstances(QueryInstancesRequest.newBuilder()
        .setService(TestSession.key("counted")).build()).getServiceInfo();
    assertThat(visible.getInstancesList()).extracting(Instance::getIp).containsExactly("10.0.0.1", "10.0.0.3");
    assertThat(svc.getChecksum()).as("of the unfiltered visible view").isEqualTo(visible.getChecksum());
  }

  @Test
  void listConnectionsIsOldestFirstAndFiltersByClientId() {
    TestSession first = loopback.open();
    first.helloFrame(Hello.newBuilder().setClientId("a").setClientName("app").setClientVersion("1.2")
        .putLabels("zone", "eu"));
    register(first, "listed", "10.0.0.1", Map.of());
    session("b").subscribe("listed");
    session("a");
    loopback.open(); // no hello
    var admin = AdminGrpc.newBlockingStub(loopback.channel()).withDeadlineAfter(TestTime.seconds(10).toMillis(), TimeUnit.MILLISECONDS);

    List<ConnectionInfo> all = admin.listConnections(ListConnectionsRequest.getDefaultInstance()).getConnectionsList();

    assertThat(all).extracting(ConnectionInfo::getClientId).as("oldest first; no entry before hello")
        .containsExactly("a", "b", "a");
    assertThat(all.get(0).getConnectedAtMs()).isLessThanOrEqualTo(all.get(1).getConnectedAtMs());
    assertThat(all.get(0)).satisfies(c -> {
      assertThat(c.getClientName()).isEqualTo("app");
      assertThat(c.getClientVersion()).isEqualTo("1.2");
      assertThat(c.getLabelsMap()).isEqualTo(Map.of("zone", "eu"));
      assertThat(c.getNamespace()).isEqualTo("public");
      assertThat(c.getInstanceCount()).isEqualTo(1);
    });
    assertThat(all.get(1).getSubscriptionCount()).isEqualTo(1);
    List<ConnectionInfo> onlyA = admin.listConnections(ListConnectionsRequest.newBuilder().setClientId("a").build())
        .getConnectionsList();
    assertThat(onlyA).extracting(ConnectionInfo::getConnectionId)
        .containsExactly(all.get(0).getConnectionId(), all.get(2).getConnectionId());
    assertThat(admin.listConnections(ListConnectionsRequest.newBuilder().setClientId("nobody").build())
        .getConnectionsList()).isEmpty();
  }

  @Test
  void aLoggersLevelIsSetAndListedOverGrpcAndBadOnesAreNamed() {
    AdminGrpc.AdminBlockingStub admin = AdminGrpc.newBlockingStub(loopback.channel());
    String name = "io.roster.server.http";
    LoggerLevel before = admin.getLogLevels(GetLogLevelsRequest.newBuilder().setPrefix(name).build()).getLoggersList()
        .stream().filter(l -> l.getName().equals(name)).findFirst().orElseThrow();
    try {
      LoggerLevel set = admin.setLogLevel(SetLogLevelRequest.newBuilder().setLogger(name).setLevel("debug").build())
          .getLogger();
      assertThat(set.getLevel()).isEqualTo("DEBUG");
      assertThat(set.getEffectiveLevel()).isEqualTo("DEBUG");
      assertThat(admin.getLogLevels(GetLogLevelsRequest.newBuilder().setPrefix(name).build()).getLoggersList())
          .anySatisfy(l -> {
            assertThat(l.getName()).isEqualTo(name);
            assertThat(l.getLevel()).isEqualTo("DEBUG");
          });
      assertThatThrownBy(() -> admin.setLogLevel(SetLogLevelRequest.newBuilder().setLogger(name).setLevel("LOUD").build()))
          .isInstanceOfSatisfying(io.grpc.StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription())
                .isEqualTo("level: \"LOUD\" (expected: TRACE, DEBUG, INFO, WARN, ERROR or OFF)");
          });
      assertThatThrownBy(() -> admin.setLogLevel(SetLogLevelRequest.newBuilder().setLogger("no.such.Logger")
          .setLevel("INFO").build())).hasMessageContaining("logger: \"no.such.Logger\"");
      org.slf4j.LoggerFactory.getLogger("roster.audit");
      assertThatThrownBy(() -> admin.setLogLevel(SetLogLevelRequest.newBuilder().setLogger("roster.audit")
          .setLevel("OFF").build())).isInstanceOfSatisfying(io.grpc.StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).startsWith("logger: \"roster.audit\" (expected: a logger other "
                + "than the audit trail's, roster.audit, which is always on at INFO");
          });
    } finally {
      ((ch.qos.logback.classic.LoggerContext) org.slf4j.LoggerFactory.getILoggerFactory()).getLogger(name)
          .setLevel(before.getLevel().isEmpty() ? null : ch.qos.logback.classic.Level.toLevel(before.getLevel()));
    }
  }
}
