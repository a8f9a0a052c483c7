package io.roster.server.rpc;

import java.net.InetAddress;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Credentials;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.ListConnectionsRequest;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.ServiceKey;
import io.roster.proto.v1.UpdateInstanceRequest;
import io.roster.server.auth.AuthCommand;
import io.roster.server.testing.AuditLines;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Roster protocol with an auth file (docs/security.md): the session's hello and each unary
 * call prove an identity; what its grants do not allow is refused and changes nothing.
 */
class AuthTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest();

  @TempDir Path dir;
  private Path file;
  private String admin;
  private String deployer;
  private String reader;

  @BeforeEach
  void setUp() {
    file = dir.resolve("auth.json");
    auth("init");
    admin = auth("token", "ops", "admin@*");
    deployer = auth("token", "deployer", "write@prod/orders*", "read@*");
    reader = auth("token", "reader", "read@prod");
    loopback.start(b -> b.authFile(file));
  }

  @Test
  void aHelloWithoutOrWithAWrongTokenIsUnauthenticated() {
    for (String token : List.of("", "rst_not-a-token")) {
      TestSession s = loopback.open();
      String id = s.nextId();
      s.send(ClientFrame.newBuilder().setRequestId(id).setHello(hello("c1").setToken(token)).build());
      Result r = s.await(f -> f.getRequestId().equals(id)).getResult();
      assertThat(r.getCode()).isEqualTo(ErrorCode.ERROR_CODE_UNAUTHENTICATED);
      assertThat(r.getField()).isEqualTo("hello.token");
      assertThat(r.getMessage()).startsWith("hello.token: ");
    }
  }

  @Test
  void eachFrameIsCheckedAgainstTheSessionsGrantsAndARefusalChangesNothing() {
    TestSession writer = session(deployer, "prod");
    TestSession readOnly = session(reader, "prod");

    assertThat(register(writer, "prod", "orders-eu", "10.0.0.1").getOk()).isTrue();
    Result denied = register(readOnly, "prod", "orders-eu", "10.0.0.2");
    assertThat(denied.getCode()).isEqualTo(ErrorCode.ERROR_CODE_PERMISSION_DENIED);
    assertThat(denied.getMessage()).isEqualTo(
        "\"reader\" lacks permission write on namespace \"prod\", service \"DEFAULT_GROUP@@orders-eu\"");
    assertThat(register(writer, "prod", "payments", "10.0.0.3").getCode())
        .isEqualTo(ErrorCode.ERROR_CODE_PERMISSION_DENIED);
    assertThat(register(writer, "staging", "orders-eu", "10.0.0.4").getCode())
        .isEqualTo(ErrorCode.ERROR_CODE_PERMISSION_DENIED);
    assertThat(readOnly.request(ClientFrame.newBuilder().setSubscribe(io.roster.proto.v1.Subscribe.newBuilder()
        .setService(key("staging", "orders-eu")))).getCode()).isEqualTo(ErrorCode.ERROR_CODE_PERMISSION_DENIED);

    assertThat(ips("prod", "orders-eu")).containsExactly("10.0.0.1");
    assertThat(ips("prod", "payments")).isEmpty();
    assertThat(ips("staging", "orders-eu")).isEmpty();
  }

  @Test
  void anInstanceAnotherIdentityRegisteredIsReplacedOnlyByItOrAnAdmin() {
    String rival = auth("token", "rival", "write@prod");
    loopbackReloaded(rival);
    TestSession writer = session(deployer, "prod");
    assertThat(register(writer, "prod", "orders-eu", "10.0.0.1").getOk()).isTrue();

    Result taken = register(session(rival, "prod"), "prod", "orders-eu", "10.0.0.1");
    assertThat(taken.getCode()).isEqualTo(ErrorCode.ERROR_CODE_PERMISSION_DENIED);
    assertThat(taken.getMessage()).isEqualTo("instance 10.0.0.1:80/DEFAULT is registered by \"deployer\": only that "
        + "identity or an admin may replace it");
    Result batch = session(rival, "prod").request(ClientFrame.newBuilder().setBatchRegister(
        io.roster.proto.v1.BatchRegisterInstances.newBuilder().setService(key("prod", "orders-eu"))
            .addInstances(Instance.newBuilder().setIp("10.0.0.9").setPort(80))
            .addInstances(Instance.newBuilder().setIp("10.0.0.1").setPort(80))));
    assertThat(batch.getCode()).isEqualTo(ErrorCode.ERROR_CODE_PERMISSION_DENIED);
    assertThat(batch.getField()).isEqualTo("instances[1]");
    assertThat(ips("prod", "orders-eu")).containsExactly("10.0.0.1");

    assertThat(register(session(admin, "prod"), "prod", "orders-eu", "10.0.0.1").getOk()).isTrue();
    assertThat(writer.request(ClientFrame.newBuilder().setDeregister(io.roster.proto.v1.DeregisterInstance.newBuilder()
        .setService(key("prod", "orders-eu")).setInstance(Instance.newBuilder().setIp("10.0.0.1").setPort(80))))
        .getCode())
        .as("the admin's now").isEqualTo(ErrorCode.ERROR_CODE_NOT_FOUND);
  }

  /**
   * Every persistent instance has the same owner, so the identity that registered it is what a
   * replacement or a removal is checked against: another writer of the namespace may neither
   * take it over (weight, metadata and all) nor remove it, and the refusal names who registered
   * it and changes nothing; that identity and an admin may.
   */
  @Test
  void aPersistentInstanceIsReplacedOrRemovedOnlyByTheIdentityThatRegisteredItOrAnAdmin() {
    String ta = auth("token", "ta", "write@prod");
    String tb = auth("token", "tb", "write@prod");
    loopbackReloaded(tb);
    Instance.Builder db = Instance.newBuilder().setIp("127.0.0.8").setPort(21902);
    registry(ta).registerInstance(persistent(db));

    for (Runnable attempt : List.<Runnable>of(
        () -> registry(tb).registerInstance(persistent(db.clone().setWeight(7).putMetadata("by", "B"))),
        () -> registry(tb).deregisterInstance(io.roster.proto.v1.DeregisterInstanceRequest.newBuilder()
            .setService(key("prod", "db")).setIp("127.0.0.8").setPort(21902).build()))) {
      assertThatThrownBy(attempt::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(e.getStatus().getDescription()).startsWith("instance 127.0.0.8:21902/DEFAULT is registered by "
            + "\"ta\": only that identity or an admin may ");
      });
    }
    Instance stored = registry(admin).queryInstances(QueryInstancesRequest.newBuilder().setService(key("prod", "db"))
        .build()).getServiceInfo().getInstances(0);
    assertThat(stored.getWeight()).isEqualTo(1.0);
    assertThat(stored.getMetadataMap()).isEmpty();

    assertThat(registry(ta).registerInstance(persistent(db.clone().setWeight(3))).getInstance().getWeight())
        .as("its own identity replaces it").isEqualTo(3.0);
    assertThat(registry(admin).registerInstance(persistent(db.clone().setWeight(5))).getInstance().getWeight())
        .as("an admin replaces it").isEqualTo(5.0);
    assertThat(registry(admin).deregisterInstance(io.roster.proto.v1.DeregisterInstanceRequest.newBuilder()
        .setService(key("prod", "db")).setIp("127.0.0.8").setPort(21902).build()).getDeregistered()).isTrue();
  }

  private static io.roster.proto.v1.RegisterInstanceRequest persistent(Instance.Builder instance) {
    return io.roster.proto.v1.RegisterInstanceRequest.newBuilder().setService(key("prod", "db"))
        .setInstance(instance).build();
  }

  /** Waits until the server has read the auth file with {@code token} in it. */
  private void loopbackReloaded(String token) {
    await().atMost(TestTime.seconds(10)).pollInterval(java.time.Duration.ofSeconds(1)).until(() -> {
      try {
        registry(token).queryInstances(QueryInstancesRequest.newBuilder().setService(key("prod", "x")).build());
        return true;
      } catch (StatusRuntimeException e) {
        return false;
      }
    });
  }

  @Test
  void unaryCallsCarryTheTokenInTheirMetadata() {
    register(session(deployer, "prod"), "prod", "orders-eu", "10.0.0.1");
    QueryInstancesRequest query = QueryInstancesRequest.newBuilder().setService(key("prod", "orders-eu")).build();

    assertThatThrownBy(() -> RegistryGrpc.newBlockingStub(loopback.channel()).queryInstances(query))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
          assertThat(e.getStatus().getDescription()).startsWith("authorization: missing");
        });
    assertThat(registry(reader).queryInstances(query).getServiceInfo().getInstancesCount()).isEqualTo(1);

    UpdateInstanceRequest offline = UpdateInstanceRequest.newBuilder().setService(key("prod", "orders-eu"))
        .setIp("10.0.0.1").setPort(80).setEnabled(false).build();
    assertThatThrownBy(() -> registry(deployer).updateInstance(offline))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    assertThat(registry(admin).queryInstances(query).getServiceInfo().getInstances(0).getEnabled()).isTrue();
    assertThatThrownBy(() -> AdminGrpc.newBlockingStub(loopback.channel()).withInterceptors(bearer(reader))
        .listConnections(ListConnectionsRequest.getDefaultInstance()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
          assertThat(e.getStatus().getDescription()).isEqualTo(
              "\"reader\" lacks permission admin on every namespace");
        });

    List<String> audit;
    try (AuditLines lines = new AuditLines()) {
      assertThat(registry(admin).updateInstance(offline).getInstance().getEnabled()).isFalse();
      audit = lines.lines();
    }
    assertThat(audit).containsExactly(
        "audit: who=ops from=127.0.0.1 action=UpdateInstance target=prod/DEFAULT_GROUP@@orders-eu 10.0.0.1:80/DEFAULT "
            + "change=enabled=false result=ok");
  }

  @Test
  void aSessionWhoseIdentityIsRemovedEndsAndWhatItRegisteredGoes() throws Exception {
    TestSession writer = session(deployer, "prod");
    register(writer, "prod", "orders-eu", "10.0.0.1");
    TestSession other = session(reader, "prod");

    auth("remove", "deployer");

    Status status = writer.awaitClosed();
    assertThat(status.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(status.getDescription()).contains("\"deployer\"").contains("removed from the auth file");
    await().atMost(TestTime.seconds(10)).until(() -> ips("prod", "orders-eu").isEmpty());
    other.ping();
  }

  @Test
  void aRenewedTokenMustProveTheSameIdentity() {
    TestSession writer = session(deployer, "prod");
    String rotated = auth("token", "deployer", "write@prod/orders*", "read@*");
    // Refused until the server has read the file again (every 2 s); polled slowly, as each refusal
    // counts against this host's bad credentials.
    await().atMost(TestTime.seconds(10)).pollInterval(java.time.Duration.ofSeconds(1))
        .until(() -> renew(writer, rotated).getOk());

    Result other = renew(writer, reader);
    assertThat(other.getCode()).isEqualTo(ErrorCode.ERROR_CODE_PERMISSION_DENIED);
    assertThat(other.getMessage()).contains("proves \"reader\", but this session is \"deployer\"");
    assertThat(register(writer, "prod", "orders-eu", "10.0.0.1").getOk()).isTrue();
  }

  @Test
  void aHostThatSentManyBadTokensKeepsItsConnectionsHealthAndValidTokens() throws Exception {
    ManagedChannel guesser = loopback.newChannel(b -> b.localSocketPicker(from("127.0.0.2")));
    TestSession guessing = loopback.open(guesser);
    for (int i = 0; i < 200; i++) {
      assertThat(helloResult(i == 0 ? guessing : loopback.open(guesser), "rst_guess-" + i).getMessage())
          .isEqualTo("hello.token: refused: a token the auth file does not list");
    }

    // A token's check is as cheap as a refusal: a valid one from that host passes, on its open
    // connection and on new ones, which the server still greets (it never closes them at accept).
    assertThat(firstByteFrom("127.0.0.2")).as("the server speaks HTTP/2 first to the guessing host").isNotEqualTo(-1);
    TestSession valid = loopback.open(loopback.newChannel(b -> b.localSocketPicker(from("127.0.0.2"))));
    assertThat(valid.helloFrame(hello("valid-from-guesser").setToken(deployer).setNamespace("prod"))
        .getWelcome().getFeaturesList()).contains("credentials");
    assertThat(register(valid, "prod", "orders-eu", "10.0.0.1").getOk()).isTrue();
    assertThat(RegistryGrpc.newBlockingStub(guesser).withInterceptors(bearer(reader))
        .queryInstances(QueryInstancesRequest.newBuilder().setService(key("prod", "orders-eu")).build())
        .getServiceInfo().getInstancesCount()).isEqualTo(1);
    assertThat(io.grpc.health.v1.HealthGrpc.newBlockingStub(guesser)
        .check(io.grpc.health.v1.HealthCheckRequest.getDefaultInstance()).getStatus())
        .isEqualTo(io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
    assertThat(loopback.server().sessions().authenticator().failures()).isEqualTo(200);
  }

  /** Connects from {@code localHost} and reads the first byte the server sends (-1: it closed). */
  private int firstByteFrom(String localHost) throws java.io.IOException {
    try (Socket socket = new Socket()) {
      socket.bind(new InetSocketAddress(localHost, 0));
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), loopback.port()));
      socket.setSoTimeout((int) TestTime.seconds(10).toMillis());
      return socket.getInputStream().read();
    }
  }

  private static NettyChannelBuilder.LocalSocketPicker from(String localHost) {
    return new NettyChannelBuilder.LocalSocketPicker() {
      @Override
      public SocketAddress createSocketAddress(SocketAddress remote, io.grpc.Attributes attrs) {
        return new InetSocketAddress(localHost, 0);
      }
    };
  }

  private static Result helloResult(TestSession s, String token) {
    String id = s.nextId();
    s.send(ClientFrame.newBuilder().setRequestId(id).setHello(hello("guesser").setToken(token)).build());
    return s.await(f -> f.getRequestId().equals(id)).getResult();
  }

  private static Result renew(TestSession s, String token) {
    return s.request(ClientFrame.newBuilder().setCredentials(Credentials.newBuilder().setToken(token)));
  }

  private TestSession session(String token, String namespace) {
    TestSession s = loopback.open();
    ServerFrame welcome = s.helloFrame(hello("client-" + token.hashCode()).setToken(token).setNamespace(namespace));
    assertThat(welcome.getWelcome().getFeaturesList()).contains("credentials");
    return s;
  }

  private static Hello.Builder hello(String clientId) {
    return Hello.newBuilder().setClientId(clientId);
  }

  private static Result register(TestSession s, String namespace, String service, String ip) {
    return s.request(ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
        .setService(key(namespace, service)).setInstance(Instance.newBuilder().setIp(ip).setPort(80))));
  }

  private List<String> ips(String namespace, String service) {
    List<String> ips = new ArrayList<>();
    registry(admin).queryInstances(QueryInstancesRequest.newBuilder().setService(key(namespace, service)).build())
        .getServiceInfo().getInstancesList().forEach(i -> ips.add(i.getIp()));
    return ips;
  }

  private RegistryGrpc.RegistryBlockingStub registry(String token) {
    return RegistryGrpc.newBlockingStub(loopback.channel()).withInterceptors(bearer(token));
  }

  private static io.grpc.ClientInterceptor bearer(String token) {
    Metadata m = new Metadata();
    m.put(Callers.AUTHORIZATION, "Bearer " + token);
    return MetadataUtils.newAttachHeadersInterceptor(m);
  }

  private static ServiceKey key(String namespace, String service) {
    return ServiceKey.newBuilder().setNamespace(namespace).setName(service).build();
  }

  /** Runs the {@code auth} command on the test's file; returns what it printed, trimmed. */
  private String auth(String command, String... args) {
    List<String> all = new ArrayList<>(List.of(command, file.toString()));
    all.addAll(List.of(args));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int status = AuthCommand.main(all, new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
    assertThat(status).isZero();
    return out.toString(StandardCharsets.UTF_8).trim();
  }
}
