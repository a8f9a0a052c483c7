package io.roster.server.nacos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.roster.server.testing.LoopbackServer;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * The {@code roster.trace.nacos} logger over a real loopback connection: at DEBUG, each step of a
 * connection's requests, from its transport to the ack of the push its registration caused; at
 * INFO, the default, nothing.
 */
class NacosTraceTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults();

  private final ListAppender<ILoggingEvent> seen = new ListAppender<>();
  private final Logger logger = ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(NacosTrace.LOGGER);

  @AfterEach
  void detach() {
    logger.detachAppender(seen);
    logger.setLevel(null);
    seen.stop();
  }

  private void capture(Level level) {
    seen.setContext(logger.getLoggerContext());
    seen.start();
    logger.setLevel(level);
    logger.addAppender(seen);
  }

  /** {@code "step type [rev=R]"} of each line about connection {@code id}, in order. */
  private List<String> steps(String id) {
    return seen.list.stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.startsWith("conn=" + id + " "))
        .map(m -> m.replaceFirst("^conn=\\S+ step=(\\S+) type=(\\S+)( rev=\\S+)? at=\\d+$", "$1 $2$3")).toList();
  }

  private static String serverCheck(NacosConn c) {
    return Envelope.body(c.call("ServerCheckRequest", "{\"headers\":{},\"module\":\"internal\"}"))
        .get("connectionId").asText();
  }

  @Test
  void atDebugEachStepOfARegistrationIsLoggedWithItsTimeFromTransportToTheAckOfItsPush() {
    capture(Level.DEBUG);
    NacosConn c = new NacosConn(loopback);
    String id = serverCheck(c);
    c.setup();
    c.call("SubscribeServiceRequest", NacosConn.subscribe("orders", true));
    c.call("InstanceRequest", NacosConn.register("orders", "10.0.0.1", 80));
    await().atMost(NacosConn.WAIT).until(() -> c.pushes().stream()
        .anyMatch(p -> p.path("serviceInfo").path("hosts").size() == 1));
    String rev = c.pushes().stream().filter(p -> p.path("serviceInfo").path("hosts").size() == 1)
        .findFirst().orElseThrow().get("requestId").asText();
    await().atMost(NacosConn.WAIT).until(() -> steps(id).contains("acked NotifySubscriberRequest rev=" + rev));

    List<String> steps = steps(id);
    assertThat(steps).containsSubsequence("transport -", "received ServerCheckRequest", "answered ServerCheckRequest",
        "received ConnectionSetupRequest", "answered ConnectionSetupRequest", "received SubscribeServiceRequest",
        "answered SubscribeServiceRequest", "received InstanceRequest", "applied InstanceRequest",
        "answered InstanceRequest");
    // The push runs on the scheduler, so it may be written before or after the answer.
    assertThat(steps).containsSubsequence("received InstanceRequest", "pushed NotifySubscriberRequest rev=" + rev,
        "acked NotifySubscriberRequest rev=" + rev);
    // Every line carries its time: microseconds since the epoch.
    assertThat(seen.list.stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.startsWith("conn=" + id + " "))
        .map(m -> Long.parseLong(m.replaceFirst("^.* at=", "")))).allMatch(t -> t > 1_600_000_000_000_000L);
  }

  @Test
  void atInfoTheDefaultNothingIsLogged() {
    capture(Level.INFO);
    NacosConn c = new NacosConn(loopback);
    serverCheck(c);
    c.setup();
    c.call("InstanceRequest", NacosConn.register("orders", "10.0.0.1", 80));
    assertThat(seen.list).isEmpty();
  }
}
