package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.LogLines;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The official {@code nacos-client} 2.5.1 against a Roster server process with auth on
 * ({@code --auth-file}): an application given {@code username} and {@code password} logs in on
 * the HTTP port, registers, discovers and is pushed, unchanged; one without them, or with a
 * wrong password, is refused with Nacos's 403 and changes nothing.
 */
class NacosAuthClientTest {

  private static final String PASSWORD = "a password of the app";

  private static ServerProcess server;
  private static Path dir;
  private final List<NamingService> clients = new ArrayList<>();

  @BeforeAll
  static void startServer() throws Exception {
    dir = Files.createTempDirectory("nacos-auth-client");
    System.setProperty("JM.SNAPSHOT.PATH", dir.toString());
    System.setProperty("JM.LOG.PATH", dir.resolve("logs").toString());
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"))
        .user("app", PASSWORD, "write@public")
        .user("ops", PASSWORD, "admin@*");
    int port = Ports.freeForNacos();
    // The HTTP port where the client logs in: serverAddr's own port (the gRPC port - 1000).
    server = ServerProcess.start("127.0.0.1", port, "--http-port", "auto", "--auth-file", auth.path().toString());
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  @AfterEach
  void shutDownClients() throws NacosException {
    for (NamingService c : clients) {
      c.shutDown();
    }
  }

  private NamingService nacos(String username, String password) throws NacosException {
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, "127.0.0.1:" + (server.port - 1000));
    if (username != null) {
      p.setProperty(PropertyKeyConst.USERNAME, username);
      p.setProperty(PropertyKeyConst.PASSWORD, password);
    }
    NamingService c = NamingFactory.createNamingService(p);
    clients.add(c);
    return c;
  }

  private static List<String> addresses(List<com.alibaba.nacos.api.naming.pojo.Instance> instances) {
    return instances.stream().map(i -> i.getIp() + ":" + i.getPort()).sorted().toList();
  }

  @Test
  void anApplicationWithUsernameAndPasswordRegistersDiscoversAndIsPushed() throws Exception {
    NamingService provider = nacos("app", PASSWORD);
    NamingService second = nacos("app", PASSWORD);
    NamingService consumer = nacos("app", PASSWORD);
    provider.registerInstance("auth-orders", "10.0.21.1", 80);
    AtomicReference<List<String>> seen = new AtomicReference<>(List.of());
    consumer.subscribe("auth-orders", e -> seen.set(addresses(((NamingEvent) e).getInstances())));
    await().atMost(Timing.seconds(15)).until(() -> seen.get().equals(List.of("10.0.21.1:80")));

    second.registerInstance("auth-orders", "10.0.21.2", 80);
    await().atMost(Timing.seconds(15)).until(() -> seen.get().equals(List.of("10.0.21.1:80", "10.0.21.2:80")));
    assertThat(addresses(consumer.getAllInstances("auth-orders", false)))
        .containsExactly("10.0.21.1:80", "10.0.21.2:80");
    assertThat(consumer.getServicesOfServer(1, 100).getData()).contains("auth-orders");

    provider.deregisterInstance("auth-orders", "10.0.21.1", 80);
    await().atMost(Timing.seconds(15)).until(() -> seen.get().equals(List.of("10.0.21.2:80")));
  }

  @Test
  void anApplicationWithoutCredentialsIsRefusedWith403AndChangesNothing() throws Exception {
    NamingService anonymous = nacos(null, null);

    assertThatThrownBy(() -> anonymous.registerInstance("auth-payments", "10.0.22.1", 80))
        .isInstanceOfSatisfying(NacosException.class, e -> {
          assertThat(e.getErrCode()).isEqualTo(NacosException.NO_RIGHT);
          assertThat(e.getErrMsg()).contains("accessToken: missing");
        });
    assertThatThrownBy(() -> anonymous.getAllInstances("auth-payments", false))
        .isInstanceOfSatisfying(NacosException.class, e -> assertThat(e.getErrCode()).isEqualTo(NacosException.NO_RIGHT));
    assertThatThrownBy(() -> anonymous.subscribe("auth-payments", e -> { }))
        .isInstanceOfSatisfying(NacosException.class, e -> assertThat(e.getErrCode()).isEqualTo(NacosException.NO_RIGHT));
    assertThat(nacos("ops", PASSWORD).getAllInstances("auth-payments", false)).isEmpty();
  }

  @Test
  void aWrongPasswordIsReportedAsAFailedLoginAndChangesNothing() throws Exception {
    // What the client logs (in-process: its log files are set up once per JVM, by whichever test came first).
    try (LogLines clientLog = new LogLines("com.alibaba.nacos.client.auth.impl.process.HttpLoginProcessor",
        ch.qos.logback.classic.Level.INFO)) {
      NamingService wrong = nacos("app", "not the password at all");

      // What the application sees: the refusal says that the login failed and why.
      assertThatThrownBy(() -> wrong.registerInstance("auth-refunds", "10.0.23.1", 80))
          .isInstanceOfSatisfying(NacosException.class, e -> {
            assertThat(e.getErrCode()).isEqualTo(NacosException.NO_RIGHT);
            assertThat(e.getErrMsg()).as("client log: " + clientLog.lines()).contains("the last login from 127.0.0.1")
                .contains("failed (password: unknown user or wrong password for \"app\")")
                .contains("a client given a username and password sends no token when its login fails");
          });
      // Its login was answered as Nacos answers a bad one, 403 with the reason.
      await().atMost(Timing.seconds(15)).until(() -> clientLog.lines().stream().anyMatch(
          l -> l.startsWith("login failed: {\"code\":403") && l.contains("unknown user or wrong password for \\\"app\\\"")));
    }
    assertThat(nacos("ops", PASSWORD).getAllInstances("auth-refunds", false)).isEmpty();
  }
}
