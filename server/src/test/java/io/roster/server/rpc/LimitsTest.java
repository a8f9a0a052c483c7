package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.ListServicesRequest;
import io.roster.proto.v1.ListServicesResponse;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.Subscribe;
import io.roster.proto.v1.WatchRequest;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.StreamRecorder;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The limits table of docs/protocol.md, over loopback: each limit is an error naming the field. */
class LimitsTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.maxSubscriptionsPerConnection(2));

  private TestSession raw() {
    return loopback.open();
  }

  private TestSession session(String clientId) {
    return raw().hello(clientId);
  }

  /** Sends a frame with exactly this request id and returns the next result. */
  private static Result sendWithId(TestSession s, String requestId, ClientFrame.Builder frame) {
    s.send(frame.setRequestId(requestId).build());
    return s.await(ServerFrame::hasResult).getResult();
  }

  private static ClientFrame.Builder register(String service, String ip) {
    return ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder().setService(TestSession.key(service))
        .setInstance(Instance.newBuilder().setIp(ip).setPort(80)));
  }

  private static void assertInvalid(Result r, String field) {
    assertThat(r.getOk()).isFalse();
    assertThat(r.getCode()).isEqualTo(ErrorCode.ERROR_CODE_INVALID_ARGUMENT);
    assertThat(r.getField()).isEqualTo(field);
  }

  @Test
  void aMissingOrOverlongRequestIdIsRefusedAndTheStreamStays() {
    TestSession s = session("ids");

    s.send(register("limits", "10.0.0.1").build());
    ServerFrame missing = s.await(ServerFrame::hasResult);
    assertThat(missing.getRequestId()).isEmpty();
    assertInvalid(missing.getResult(), "request_id");
    assertThat(missing.getResult().getMessage()).isEqualTo("request_id: \"\" (expected: 1..64 characters)");

    assertInvalid(sendWithId(s, "x".repeat(65), register("limits", "10.0.0.1")), "request_id");
    assertThat(loopback.server().registry().serviceCount()).as("nothing was registered").isZero();

    Result longest = sendWithId(s, "y".repeat(64), register("limits", "10.0.0.1"));
    assertThat(longest.getOk()).as("64 characters are allowed").isTrue();
  }

  @Test
  void aHelloWithABadRequestIdIsRefusedAndACorrectOneFollows() {
    TestSession s = raw();
    Result r = sendWithId(s, "", ClientFrame.newBuilder().setHello(Hello.newBuilder().setClientId("c")));
    assertInvalid(r, "request_id");
    s.hello("c");
    assertThat(s.register("limits", "10.0.0.1", 80).getOk()).isTrue();
  }

  @Test
  void helloFieldsAreBounded() {
    TestSession s = raw();
    assertInvalid(s.request(ClientFrame.newBuilder().setHello(Hello.newBuilder().setClientId("c".repeat(129)))),
        "hello.client_id");
    assertInvalid(s.request(ClientFrame.newBuilder().setHello(Hello.newBuilder().setClientId("c")
        .setClientName("n".repeat(129)))), "hello.client_name");
    assertInvalid(s.request(ClientFrame.newBuilder().setHello(Hello.newBuilder().setClientId("c")
        .setClientVersion("v".repeat(65)))), "hello.client_version");
    Map<String, String> labels = new HashMap<>();
    for (int i = 0; i < 65; i++) {
      labels.put("k" + i, "v");
    }
    Result tooManyLabels = s.request(ClientFrame.newBuilder().setHello(Hello.newBuilder().setClientId("c")
        .putAllLabels(labels)));
    assertInvalid(tooManyLabels, "hello.labels");
    assertThat(tooManyLabels.getMessage()).contains("at most 64 entries");
    assertInvalid(s.request(ClientFrame.newBuilder().setHello(Hello.newBuilder().setClientId("c")
        .putLabels("k", "v".repeat(1025)))), "hello.labels[k]");
    assertThat(loopback.server().sessions().count()).as("no session yet").isZero();

    ServerFrame welcome = s.helloFrame(Hello.newBuilder().setClientId("c".repeat(128))
        .setClientName("n".repeat(128)).setClientVersion("v".repeat(64)).putLabels("k", "v".repeat(1024)));
    assertThat(welcome.hasWelcome()).as("the limits themselves are allowed").isTrue();
  }

  @Test
  void anEmptyClusterInAFilterIsInvalid() {
    TestSession s = session("filter");
    Result r = s.request(ClientFrame.newBuilder().setSubscribe(Subscribe.newBuilder()
        .setService(TestSession.key("limits")).addClusters("a").addClusters("")));
    assertInvalid(r, "clusters[1]");
    assertThat(loopback.server().sessions().all().get(0).subscriptionCount()).isZero();
  }

  @Test
  void anIpIsAtMost128Characters() {
    TestSession s = session("ips");
    String longest = "a".repeat(128);
    assertThat(s.register("limits", longest, 80).getOk()).isTrue();
    Result r = s.register("limits", "a".repeat(129), 80);
    assertInvalid(r, "instance.ip");
    assertThat(loopback.server().registry().snapshot(io.roster.server.model.ServiceKey.of("", "", "limits")).instances())
        .extracting(io.roster.server.model.Instance::ip).containsExactly(longest);
  }

  @Test
  void aPageSizeOfZeroMeans100() {
    TestSession s = session("many");
    for (int i = 0; i < 101; i++) {
      assertThat(s.register(String.format("svc-%03d", i), "10.0.0.1", 80).getOk()).isTrue();
    }
    ListServicesResponse page = RegistryGrpc.newBlockingStub(loopback.channel()).withDeadlineAfter(TestTime.seconds(10).toMillis(), TimeUnit.MILLISECONDS)
        .listServices(ListServicesRequest.newBuilder().setPageSize(0).build());
    assertThat(page.getTotal()).isEqualTo(101);
    assertThat(page.getServicesCount()).isEqualTo(100);
    assertThat(page.getServices(99).getName()).isEqualTo("svc-099");
  }

  @Test
  void theSubscriptionLimitIsPerConnectionAndWatchesDoNotCount() throws Exception {
    TestSession s = session("subscriber");
    // Watches on the same channel first: they must not use up the session's subscriptions.
    List<StreamRecorder<ServiceInfo>> watches = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      StreamRecorder<ServiceInfo> q = new StreamRecorder<>();
      watches.add(q);
      RegistryGrpc.newStub(loopback.channel())
          .watch(WatchRequest.newBuilder().setService(TestSession.key("w" + i)).build(), q);
    }
    for (StreamRecorder<ServiceInfo> q : watches) {
      assertThat(q.next()).isNotNull();
    }

    assertThat(s.subscribe("a").getOk()).isTrue();
    assertThat(s.subscribe("b").getOk()).isTrue();
    Result third = s.subscribe("c");
    assertThat(third.getCode()).isEqualTo(ErrorCode.ERROR_CODE_RESOURCE_EXHAUSTED);
    assertThat(third.getMessage()).contains("2 subscriptions").contains("limit: 2")
        .contains("--max-subscriptions-per-connection");
    assertThat(s.subscribe("a").getOk()).as("subscribing again is not a new subscription").isTrue();
    TestSession sameConnection = session("same-connection");
    assertThat(sameConnection.subscribe("c").getCode()).as("counted over every session of the connection")
        .isEqualTo(ErrorCode.ERROR_CODE_RESOURCE_EXHAUSTED);
    TestSession elsewhere = loopback.open(loopback.newChannel()).hello("elsewhere");
    assertThat(elsewhere.subscribe("c").getOk()).as("another connection has its own").isTrue();
  }
}
