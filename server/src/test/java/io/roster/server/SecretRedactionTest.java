package io.roster.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Hello;
import io.roster.server.config.ServerConfig;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * No credential reaches the log: requests that carry a token or a password in every way the
 * HTTP and client ports take one leave no trace of it in any log line, and the server's layout
 * masks a credential that some line might quote.
 */
class SecretRedactionTest {

  private static final String SECRET = "s3cr3t-VALUE-never-logged";
  private static final Duration WAIT = TestTime.seconds(10);

  @TempDir Path dir;

  @Test
  void credentialsInTextAreMasked() {
    assertThat(SecretRedaction.redact("GET /nacos/v1/ns/instance/list?serviceName=a&accessToken=" + SECRET + "&x=1"))
        .isEqualTo("GET /nacos/v1/ns/instance/list?serviceName=a&accessToken=***&x=1");
    assertThat(SecretRedaction.redact("username=ops&password=" + SECRET)).isEqualTo("username=ops&password=***");
    assertThat(SecretRedaction.redact("{\"accessToken\":\"" + SECRET + "\",\"tokenTtl\":18000}"))
        .isEqualTo("{\"accessToken\":\"***\",\"tokenTtl\":18000}");
    assertThat(SecretRedaction.redact("Authorization: Bearer " + SECRET)).isEqualTo("Authorization: Bearer ***");
    assertThat(SecretRedaction.redact("hello with rst_AbC-12_xyz refused")).isEqualTo("hello with rst_*** refused");
    assertThat(SecretRedaction.redact("token rt1.ops.1750000000.QmFzZTY0LXNpZw was used"))
        .isEqualTo("token rt1.ops.1750000000.*** was used");
    String plain = "accessToken: refused: a token the auth file does not list; needs permission write on \"public\"";
    assertThat(SecretRedaction.redact(plain)).isSameAs(plain);
  }

  @Test
  void theServersLayoutMasksMessagesAndExceptions() throws Exception {
    LoggerContext context = new LoggerContext();
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(context);
    configurator.doConfigure(Main.class.getClassLoader().getResource("logback.xml"));
    PatternLayout layout = new PatternLayout();
    layout.setContext(context);
    layout.setPattern("%msg%n%ex");
    layout.start();
    Logger logger = context.getLogger("test");
    LoggingEvent event = new LoggingEvent(Logger.class.getName(), logger, Level.WARN,
        "request /x?accessToken={} failed", new IllegalArgumentException("bad query: password=" + SECRET),
        new Object[] {SECRET});
    String line = layout.doLayout(event);
    assertThat(line).contains("accessToken=***", "password=***", "IllegalArgumentException").doesNotContain(SECRET);
    context.stop();
  }

  @Test
  void requestsCarryingCredentialsLeaveNoTraceInTheLog() throws Exception {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json")).user("ops", SECRET + "-password", "admin@*");
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    Level level = root.getLevel();
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    root.addAppender(seen);
    // The levels the server ships with, DEBUG for Roster's own loggers.
    root.setLevel(Level.DEBUG);
    List<String> quiet = List.of("org.eclipse.jetty", "io.grpc", "io.netty", "org.apache.ratis");
    quiet.forEach(n -> context.getLogger(n).setLevel(Level.WARN));
    try (RosterServer server = RosterServer.start(ServerConfig.builder().dataDir(null).host("127.0.0.1").port(0)
        .httpPort(0).shutdownGrace(Duration.ofMillis(200)).warmUp(Duration.ZERO).authFile(auth.path()).build())) {
      HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build();
      String base = "http://127.0.0.1:" + server.httpPort();
      List<HttpRequest> requests = new ArrayList<>();
      for (String path : List.of("/nacos/v1/ns/instance/list?serviceName=orders&accessToken=" + SECRET,
          "/nacos/v1/ns/instance/list?accessToken=" + SECRET + "&weight=heavy", "/no/such?accessToken=" + SECRET,
          "/roster/v1/admin/permissions?accessToken=" + SECRET, "/metrics?accessToken=" + SECRET,
          "/console/?accessToken=" + SECRET)) {
        requests.add(HttpRequest.newBuilder(URI.create(base + path)).timeout(WAIT).build());
      }
      requests.add(HttpRequest.newBuilder(URI.create(base + "/nacos/v1/ns/instance/list?serviceName=orders"))
          .header("Authorization", "Bearer " + SECRET).timeout(WAIT).build());
      requests.add(HttpRequest.newBuilder(URI.create(base + "/nacos/v1/ns/instance"))
          .header("Content-Type", "application/x-www-form-urlencoded").timeout(WAIT)
          .POST(HttpRequest.BodyPublishers.ofString("serviceName=orders&ip=10.0.0.1&port=80&accessToken=" + SECRET))
          .build());
      for (String password : List.of(SECRET, SECRET + "-password")) {
        requests.add(HttpRequest.newBuilder(URI.create(base + "/nacos/v1/auth/users/login?username=ops"))
            .header("Content-Type", "application/x-www-form-urlencoded").timeout(WAIT)
            .POST(HttpRequest.BodyPublishers.ofString("password=" + password)).build());
      }
      for (HttpRequest r : requests) {
        http.send(r, HttpResponse.BodyHandlers.discarding());
      }
      // The client port: a hello with a token that is refused.
      io.grpc.ManagedChannel channel = io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder
          .forAddress("127.0.0.1", server.port()).usePlaintext().build();
      try {
        TestSession session = new TestSession(channel);
        String id = session.nextId();
        session.send(ClientFrame.newBuilder().setRequestId(id).setHello(Hello.newBuilder().setClientId("c1")
            .setToken("rst_" + SECRET)).build());
        session.await(f -> f.getRequestId().equals(id));
        session.close();
      } finally {
        channel.shutdownNow();
      }
    } finally {
      root.detachAppender(seen);
      root.setLevel(level);
      quiet.forEach(n -> context.getLogger(n).setLevel(null));
    }
    assertThat(seen.list).as("lines were logged meanwhile").isNotEmpty();
    for (ILoggingEvent e : seen.list) {
      String text = e.getFormattedMessage() + (e.getThrowableProxy() == null ? ""
          : " " + ch.qos.logback.classic.pattern.ThrowableProxyConverter.class.getSimpleName() + ": "
              + e.getThrowableProxy().getMessage());
      assertThat(text).as("a line of %s", e.getLoggerName()).doesNotContain(SECRET);
    }
  }
}
