package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The session-level liveness rule over a real socket: a stream that sends nothing for
 * keepalive time + timeout is ended and its instances removed; one that pings stays. The
 * keepalive settings scale by the test time factor (a ping's round trip on a busy machine must
 * stay well inside them), and so do the waits for the end.
 */
class SilentPeerTest {

  private static final Duration TIME = TestTime.millis(300);
  private static final Duration TIMEOUT = TestTime.millis(300);
  private static final Duration LIMIT = TIME.plus(TIMEOUT);

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.keepaliveTime(TIME).keepaliveTimeout(TIMEOUT));

  /**
   * A session registers and then says nothing: it is ended with UNAVAILABLE naming the rule,
   * its instance is removed, and not before the silence limit. The silence is counted from the
   * client's last frame (the register), so the clock starts before that frame is sent: timed
   * from the answer instead, a slow answer would eat into the measured silence.
   */
  @Test
  void aSessionThatSendsNothingIsEndedAndItsInstancesRemoved() throws Exception {
    TestSession silent = loopback.session("silent");
    long lastFrameSentAt = System.nanoTime();
    assertThat(silent.register("quiet", "10.0.0.1", 80).getOk()).isTrue();

    Status status = silent.closed().get(TestSession.WAIT.plus(LIMIT).toMillis(), TimeUnit.MILLISECONDS);

    Duration silentFor = Duration.ofNanos(System.nanoTime() - lastFrameSentAt);
    assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(status.getDescription()).contains("no frame from the client for " + LIMIT.toMillis() + " ms")
        .contains("ping");
    assertThat(silentFor).as("ended no earlier than the limit").isGreaterThanOrEqualTo(LIMIT);
    assertThat(loopback.server().registry().snapshot(ServiceKey.of("public", "DEFAULT_GROUP", "quiet")).instances()).isEmpty();
    assertThat(loopback.server().sessions().count()).isZero();
  }

  @Test
  void aStreamThatNeverSaysHelloIsEndedToo() throws Exception {
    TestSession mute = loopback.open();

    assertThat(mute.closed().get(TestSession.WAIT.plus(LIMIT).toMillis(), TimeUnit.MILLISECONDS).getCode())
        .isEqualTo(Status.Code.UNAVAILABLE);
  }

  @Test
  void pingsKeepAnOtherwiseIdleSessionAlive() {
    TestSession pinger = loopback.session("pinger");
    assertThat(pinger.register("kept", "10.0.0.2", 80).getOk()).isTrue();
    long until = System.nanoTime() + LIMIT.multipliedBy(4).toNanos();
    int pings = 0;
    while (System.nanoTime() < until) {
      pinger.ping(); // a round trip, far below the limit
      pings++;
    }

    assertThat(pinger.closed()).isNotDone();
    assertThat(pings).isGreaterThan(10);
    assertThat(loopback.server().registry().snapshot(ServiceKey.of("public", "DEFAULT_GROUP", "kept")).instances()).hasSize(1);
  }
}
