package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import io.roster.server.testing.AuthFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK against a server with {@code --auth-file}, over a real socket: a missing or unknown
 * token is reported to the caller as UNAUTHENTICATED (not as an outage after the request
 * timeout), what the call asked is kept, and the token supplier's next token is taken at the next
 * attempt.
 */
class AuthEndToEndTest {

  @TempDir Path dir;

  private RosterServer server;
  private RosterClient client;

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private RosterServer start(AuthFiles auth) {
    server = RosterServer.start(ServerConfig.builder().dataDir(null).host("127.0.0.1").port(0)
        .warmUp(Duration.ZERO).authFile(auth.path()).build());
    return server;
  }

  @Test
  void anUnknownTokenIsUnauthenticatedForTheCallerAndTheSuppliersNewTokenIsTakenNext() {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    String good = auth.token("orders-app", "write@public");
    start(auth);
    AtomicReference<String> token = new AtomicReference<>("rst_not-a-token-of-this-file");
    client = RosterClient.builder().serverAddresses("127.0.0.1:" + server.port()).requestTimeout(TestServers.scaled(Duration.ofSeconds(30)))
        .tokenSupplier(token::get).build();

    long started = System.nanoTime();
    assertThatThrownBy(() -> client.registerInstance("orders", "10.0.0.1", 8080))
        .isInstanceOfSatisfying(RosterException.class, e -> {
          assertThat(e.code()).isEqualTo(RosterException.Code.UNAUTHENTICATED);
          assertThat(e.field()).isEqualTo("hello.token");
          assertThat(e.getMessage()).contains("refused this client's credentials: hello.token: refused:")
              .contains("the change is kept");
        });
    assertThat(Duration.ofNanos(System.nanoTime() - started)).as("reported, not waited out")
        .isLessThan(TestServers.scaled(Duration.ofSeconds(30)));

    token.set(good);
    // The next attempt (within the first step of the auth back-off) sends the new token, and the
    // kept registration is made.
    await().atMost(TestServers.patience()).until(() -> client.getAllInstances("orders").size() == 1);
    assertThat(client.getAllInstances("orders").get(0).ip()).isEqualTo("10.0.0.1");
  }

  @Test
  void withoutATokenTheFirstCallThatNeedsTheConnectionIsUnauthenticated() {
    start(AuthFiles.create(dir.resolve("auth.json")));
    client = RosterClient.builder().serverAddresses("127.0.0.1:" + server.port()).requestTimeout(TestServers.scaled(Duration.ofSeconds(30))).build();
    assertThatThrownBy(() -> client.registerInstance("orders", "10.0.0.1", 8080))
        .isInstanceOfSatisfying(RosterException.class, e -> {
          assertThat(e.code()).isEqualTo(RosterException.Code.UNAUTHENTICATED);
          assertThat(e.getMessage()).contains("hello.token: missing");
        });
  }
}
