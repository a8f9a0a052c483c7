package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * (d) A generic tool, not our SDK: {@code buf curl} finds the services through reflection
 * and speaks JSON to them, the way grpcurl users will. Skipped when buf is not installed,
 * except in CI (CI=true), where .ci/run installs it and its absence is a failure.
 */
class BufCurlTest {

  private static final Path BUF = Path.of(System.getProperty("roster.buf", "../.tools/node_modules/.bin/buf"));
  private static ServerProcess server;

  @BeforeAll
  static void start() {
    boolean present = Files.isExecutable(BUF);
    if (!present && "true".equals(System.getenv("CI"))) {
      throw new AssertionError("buf is required in CI but missing at " + BUF.toAbsolutePath());
    }
    Assumptions.assumeTrue(present, "buf not installed (make tools)");
    server = ServerProcess.start("127.0.0.1", Ports.free());
  }

  @AfterAll
  static void stop() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  private String buf(String stdin, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(BUF.toString(), "curl", "--protocol", "grpc", "--http2-prior-knowledge"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    if (stdin != null) {
      p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  private String url(String path) {
    return "http://" + server.address() + path;
  }

  @Test
  void reflectionListsTheServices() throws Exception {
    String out = buf(null, "--list-services", url(""));
    assertThat(out.lines()).contains("roster.v1.Session", "roster.v1.Registry", "roster.v1.Admin",
        "grpc.health.v1.Health");
  }

  @Test
  void queryInstancesRoundTripsAsJson() throws Exception {
    try (RosterClient provider = RosterClient.builder().serverAddresses(server.address()).build()) {
      provider.registerInstance("buf-demo", Instance.of("10.2.0.1", 8080));
      String out = buf(null, "-d", "{\"service\":{\"name\":\"buf-demo\"}}", url("/roster.v1.Registry/QueryInstances"));
      assertThat(out).contains("\"ip\": \"10.2.0.1\"").contains("\"port\": 8080")
          .contains("\"instanceId\": \"10.2.0.1#8080#DEFAULT#DEFAULT_GROUP@@buf-demo\"");
      String bad = new String(new ProcessBuilder(BUF.toString(), "curl", "--protocol", "grpc", "--http2-prior-knowledge",
          "-d", "{\"service\":{\"name\":\"bad name\"}}", url("/roster.v1.Registry/QueryInstances"))
          .redirectErrorStream(true).start().getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(bad).contains("invalid_argument").contains("service.name");
    }
  }

  @Test
  void aSessionCanBeDrivenFromStdin() throws Exception {
    String frames = """
        {"requestId":"1","hello":{"clientId":"cli-1"}}
        {"requestId":"2","register":{"service":{"name":"stdin-demo"},"instance":{"ip":"10.0.0.7","port":8080}}}
        {"requestId":"3","subscribe":{"service":{"name":"stdin-demo"}}}
        """;
    String out = buf(frames, "-d", "@-", url("/roster.v1.Session/Connect"));
    assertThat(out).contains("\"welcome\"").contains("\"ok\": true").contains("\"push\"")
        .contains("\"ip\": \"10.0.0.7\"");
  }

  @Test
  void thePreStopDrainRecipeWorks() throws Exception {
    try (RosterClient provider = RosterClient.builder().serverAddresses(server.address()).build();
        RosterClient consumer = RosterClient.builder().serverAddresses(server.address()).build()) {
      provider.registerInstance("prestop-demo", Instance.of("10.3.0.1", 8080));
      provider.registerInstance("prestop-demo", Instance.of("10.3.0.2", 8080));
      consumer.subscribe("prestop-demo", e -> { });
      org.awaitility.Awaitility.await().atMost(Timing.seconds(10))
          .until(() -> consumer.getAllInstances("prestop-demo").size() == 2);

      // The command of docs/operations.md, with the pod's address filled in.
      String out = buf(null, "-d", "{\"service\":{\"name\":\"prestop-demo\"},\"ip\":\"10.3.0.1\",\"port\":8080,\"timeoutMs\":\"10000\"}",
          url("/roster.v1.Admin/DrainInstance"));

      assertThat(out).contains("\"notified\": 1").contains("\"acked\": 1");
      // Acked means applied: the consumer's cache already lacks it.
      assertThat(consumer.getAllInstances("prestop-demo")).extracting(Instance::ip).containsExactly("10.3.0.2");
    }
  }
}
