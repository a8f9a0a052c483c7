package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.Status;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Result;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.ShiftedClock;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Roster session proven by an access token (a user's login) ends when the token expires, and
 * the token is refused afterwards: users log in again, static tokens do not expire.
 */
class AccessTokenSessionTest {

  private static final Duration TTL = Duration.ofMinutes(1);
  private static final String PASSWORD = "a password long enough";

  private final ShiftedClock clock = new ShiftedClock();

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest().scheduler(clock);

  @TempDir Path dir;

  @AfterEach
  void tearDown() {
    loopback.close();
    clock.close();
  }

  @Test
  void aSessionOfAnAccessTokenEndsWhenItExpiresAndTheTokenIsRefusedThen() throws Exception {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json")).user("ops", PASSWORD, "admin@*");
    loopback.start(b -> b.authFile(auth.path()).tokenTtl(TTL).httpPort(0));
    String token = login();
    TestSession s = loopback.open();
    s.helloFrame(Hello.newBuilder().setClientId("ops-tool").setToken(token));
    s.ping();

    clock.shift(TTL.plusSeconds(1));

    Status ended = s.awaitClosed();
    assertThat(ended.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(ended.getDescription()).contains("\"ops\" has expired");
    TestSession again = loopback.open();
    String id = again.nextId();
    again.send(ClientFrame.newBuilder().setRequestId(id).setHello(Hello.newBuilder().setClientId("ops-tool")
        .setToken(token)).build());
    Result refused = again.await(f -> f.getRequestId().equals(id)).getResult();
    assertThat(refused.getCode()).isEqualTo(ErrorCode.ERROR_CODE_UNAUTHENTICATED);
    assertThat(refused.getMessage()).contains("expired").contains("log in again");
  }

  private String login() throws Exception {
    HttpResponse<String> r = HttpClient.newBuilder().connectTimeout(TestTime.seconds(10)).build().send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + loopback.server().httpPort()
                + "/nacos/v1/auth/users/login?username=ops"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString("password=a+password+long+enough")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return new ObjectMapper().readTree(r.body()).get("accessToken").asText();
  }
}
