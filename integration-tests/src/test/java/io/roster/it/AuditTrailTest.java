package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The audit trail of a real server process (docs/security.md, Audit): it has a size-capped file of
 * its own beside the log, no log-level API turns it off or down (an admin who turns the root
 * logger off still leaves a line for the instance it then takes out of traffic), and a flood of
 * refusals from one identity and host is a line when it starts and a count when it ends.
 */
class AuditTrailTest {

  private static final String PASSWORD = "correct horse battery";

  @TempDir Path dir;
  private ServerProcess server;

  @AfterEach
  void close() throws InterruptedException {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void theTrailHasAFileOfItsOwnAndNoLogLevelSilencesIt() throws Exception {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json")).user("ops", PASSWORD, "admin@*");
    String admin = auth.token("admin", "admin@*");
    String reader = auth.token("reader", "read@*");
    Path logs = dir.resolve("logs");
    server = ServerProcess.start("127.0.0.1", Ports.free(), "--auth-file", auth.path().toString(),
        "--log-dir", logs.toString());

    assertThat(http("POST", "/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.1&port=8080", admin).statusCode())
        .isEqualTo(200);
    HttpResponse<String> silenced = http("PUT", "/nacos/v1/ns/operator/log?logName=roster.audit&logLevel=OFF", admin);
    assertThat(silenced.statusCode()).as(silenced.body()).isEqualTo(400);
    assertThat(silenced.body()).contains("logName: \"roster.audit\"");
    assertThat(http("PUT", "/nacos/v1/ns/operator/log?logName=ROOT&logLevel=OFF", admin).statusCode()).isEqualTo(200);
    assertThat(http("PUT", "/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.1&port=8080&enabled=false", admin)
        .statusCode()).isEqualTo(200);
    for (int i = 0; i < 20; i++) {
      assertThat(http("PUT", "/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.1&port=8080&enabled=true", reader)
          .statusCode()).isEqualTo(403);
    }
    assertThat(login("ops", "wrong password of ops").statusCode()).isEqualTo(403);
    assertThat(login("ops", PASSWORD).statusCode()).isEqualTo(200);
    server.stop(); // SIGTERM: the refusals' window is written as the server stops

    List<String> trail = Files.readAllLines(logs.resolve("audit.log"));
    assertThat(trail).anyMatch(l -> l.contains("audit: who=admin from=127.0.0.1 action=SetLogLevel(HTTP) target=ROOT "
        + "change=level=OFF"));
    assertThat(trail).anyMatch(l -> l.contains("audit: who=admin from=127.0.0.1 action=UpdateInstance(HTTP) "
        + "target=public/DEFAULT_GROUP@@orders 10.0.0.1:8080/DEFAULT change=enabled=false result=ok"));
    assertThat(trail.stream().filter(l -> l.contains("who=reader from=127.0.0.1 action=Refused"))).hasSize(2);
    assertThat(trail).anyMatch(l -> l.contains("who=reader from=127.0.0.1 action=Refused count=20"));
    assertThat(trail).anyMatch(l -> l.contains("audit: who=ops from=127.0.0.1 action=Login result=password: refused"));
    assertThat(trail).anyMatch(l -> l.contains("audit: who=ops from=127.0.0.1 action=Login result=ok"));
    assertThat(trail).noneMatch(l -> l.contains(PASSWORD) || l.contains("wrong password of ops"));
    assertThat(Files.readString(logs.resolve("roster.log"))).as("the trail goes to the log as well")
        .contains("action=UpdateInstance(HTTP)");
  }

  private HttpResponse<String> login(String user, String password) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort()
            + "/nacos/v1/auth/users/login?username=" + user))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString("password=" + java.net.URLEncoder.encode(password,
            java.nio.charset.StandardCharsets.UTF_8)))
        .timeout(Timing.seconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> http(String method, String pathAndQuery, String token) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort()
        + pathAndQuery)).header("Authorization", "Bearer " + token).method(method, HttpRequest.BodyPublishers.noBody())
        .timeout(Timing.seconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
