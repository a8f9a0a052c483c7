package io.roster.server.nacos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.server.model.InstanceKey;
import io.roster.proto.nacos.Payload;
import io.roster.server.probe.ProbePolicy;
import io.roster.server.registry.HealthCheck;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The probe target policy (decision 81) on every path a persistent instance or a check port
 * comes in by, over real sockets: Roster's {@code Registry/RegisterInstance}, Nacos's {@code
 * PersistentInstanceRequest}, the v1 API's {@code POST /instance?ephemeral=false} and {@code PUT
 * /cluster}. A refusal is INVALID_ARGUMENT (400) naming the field, the value and what refuses it,
 * and the registry is left as it was.
 */
class ProbeTargetPolicyTest {

  private static final Duration WAIT = TestTime.seconds(10);
  private static final io.roster.server.model.ServiceKey DATABASES =
      io.roster.server.model.ServiceKey.of("public", "DEFAULT_GROUP", "databases");

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build();

  private static RegistryGrpc.RegistryBlockingStub registry(LoopbackServer loopback) {
    return RegistryGrpc.newBlockingStub(loopback.channel()).withDeadlineAfter(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static RegisterInstanceRequest persistent(String ip, int port) {
    return RegisterInstanceRequest.newBuilder().setService(ServiceKey.newBuilder().setName("databases"))
        .setInstance(Instance.newBuilder().setIp(ip).setPort(port)).build();
  }

  private HttpResponse<String> v1(LoopbackServer loopback, String method, String path, String form) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + loopback.server().httpPort() + path))
        .header("Content-Type", "application/x-www-form-urlencoded").timeout(WAIT)
        .method(method, HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String persistentJson(String ip, int port) {
    return NacosConn.register("databases", ip, port).replace("\"ephemeral\":true", "\"ephemeral\":false");
  }

  private static void assertNothingRegistered(LoopbackServer loopback) {
    assertThat(loopback.server().registry().snapshot(DATABASES).instances()).isEmpty();
  }

  @Test
  void byDefaultALinkLocalTargetIsRefusedOnEveryPathAndNothingChanges() throws Exception {
    try (LoopbackServer loopback = LoopbackServer.withDefaults()) {
      loopback.start();
      // Roster gRPC.
      assertThatThrownBy(() -> registry(loopback).registerInstance(persistent("169.254.169.254", 80)))
          .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).isEqualTo("ip: \"169.254.169.254\" is refused as a probe target: "
                + "refused by default (169.254.0.0/16, link-local or a cloud metadata service) unless --probe-allow lists it");
          });
      // The same address written as IPv4-mapped IPv6.
      assertThatThrownBy(() -> registry(loopback).registerInstance(persistent("::ffff:169.254.169.254", 80)))
          .isInstanceOfSatisfying(StatusRuntimeException.class,
              e -> assertThat(e.getStatus().getDescription()).startsWith("ip: \"::ffff:169.254.169.254\" is refused"));
      // Nacos gRPC.
      NacosConn nacos = new NacosConn(loopback).setup();
      Payload refused = nacos.call("PersistentInstanceRequest", persistentJson("0.0.0.0", 5432));
      assertThat(Envelope.type(refused)).isEqualTo("ErrorResponse");
      assertThat(Envelope.body(refused).get("errorCode").asInt()).isEqualTo(400);
      assertThat(Envelope.body(refused).get("message").asText())
          .startsWith("PersistentInstanceRequest: ip: \"0.0.0.0\" is refused as a probe target: never probed");
      // Nacos v1 HTTP.
      HttpResponse<String> answer = v1(loopback, "POST", "/nacos/v1/ns/instance",
          "serviceName=databases&ip=fe80::1&port=5432&ephemeral=false");
      assertThat(answer.statusCode()).isEqualTo(400);
      assertThat(answer.body()).startsWith("ip: \"fe80::1\" is refused as a probe target: refused by default (fe80::/10");
      assertNothingRegistered(loopback);

      // Loopback and ordinary addresses are taken, an ephemeral instance is never asked.
      registry(loopback).registerInstance(persistent("127.0.0.1", 5432));
      assertThat(v1(loopback, "POST", "/nacos/v1/ns/instance", "serviceName=cache&ip=169.254.1.1&port=6379").body())
          .isEqualTo("ok");
    }
  }

  @Test
  void withProbeAllowOnlyTheListedNetworksAndPortsAreTakenAndACheckPortOutsideIsRefused() throws Exception {
    ProbePolicy policy = ProbePolicy.parse("10.0.0.0/8:5000-5999,169.254.0.0/16");
    try (LoopbackServer loopback = LoopbackServer.with(b -> b.probeAllow(policy))) {
      loopback.start();
      assertThatThrownBy(() -> registry(loopback).registerInstance(persistent("127.0.0.1", 5432)))
          .isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(e.getStatus().getDescription())
              .isEqualTo("ip: \"127.0.0.1\" is refused as a probe target: not in --probe-allow "
                  + "10.0.0.0/8:5000-5999,169.254.0.0/16"));
      NacosConn nacos = new NacosConn(loopback).setup();
      Payload refused = nacos.call("PersistentInstanceRequest", persistentJson("10.0.0.5", 22));
      assertThat(Envelope.body(refused).get("message").asText()).isEqualTo("PersistentInstanceRequest: port: 22 is "
          + "refused as a probe target of 10.0.0.5: port 22 is not listed for this address in --probe-allow "
          + "10.0.0.0/8:5000-5999,169.254.0.0/16");
      assertNothingRegistered(loopback);

      // Listed: the network and port, and link-local once listed.
      assertThat(Envelope.type(nacos.call("PersistentInstanceRequest", persistentJson("10.0.0.5", 5432))))
          .isEqualTo("InstanceResponse");
      assertThat(v1(loopback, "POST", "/nacos/v1/ns/instance",
          "serviceName=databases&ip=169.254.10.10&port=5432&ephemeral=false").body()).isEqualTo("ok");

      // A check port outside the list would send the probes of 10.0.0.5 there: refused, the check unchanged.
      HttpResponse<String> check = v1(loopback, "PUT", "/nacos/v1/ns/cluster",
          "serviceName=databases&clusterName=DEFAULT&checkPort=22&useInstancePort4Check=false");
      assertThat(check.statusCode()).isEqualTo(400);
      assertThat(check.body()).isEqualTo("checkPort: 22 of cluster DEFAULT is refused as a probe target of 10.0.0.5: "
          + "port 22 is not listed for this address in --probe-allow 10.0.0.0/8:5000-5999,169.254.0.0/16");
      assertThat(loopback.server().registry().settings(DATABASES).check("DEFAULT")).isEqualTo(HealthCheck.DEFAULT);
      // One inside is taken, and then a registration is judged at the check port.
      assertThat(v1(loopback, "PUT", "/nacos/v1/ns/cluster",
          "serviceName=databases&clusterName=DEFAULT&checkPort=5001&useInstancePort4Check=false").body()).isEqualTo("ok");
      assertThat(v1(loopback, "POST", "/nacos/v1/ns/instance",
          "serviceName=databases&ip=10.0.0.6&port=22&ephemeral=false").body()).isEqualTo("ok");
      assertThat(loopback.server().registry().instance(DATABASES, new InstanceKey("10.0.0.6", 22, "DEFAULT")))
          .isNotNull();
    }
  }
}
