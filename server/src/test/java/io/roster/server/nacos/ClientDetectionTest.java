package io.roster.server.nacos;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.time.FakeScheduler;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ClientDetection} on a fake clock: when it probes, when it ends, and what it never does. */
class ClientDetectionTest {

  private static final Duration PROBE_AFTER = Duration.ofSeconds(4);
  private static final Duration ANSWER_WITHIN = Duration.ofSeconds(5);

  private final FakeScheduler fake = new FakeScheduler();
  /** Added to the fake clock's reading: a jump of the clock with no task run (a frozen server). */
  private long jumpNanos;
  private final Scheduler clock = new Scheduler() {
    @Override
    public long nanoTime() {
      return fake.nanoTime() + jumpNanos;
    }

    @Override
    public long currentTimeMillis() {
      return fake.currentTimeMillis();
    }

    @Override
    public void execute(Runnable task) {
      fake.execute(task);
    }

    @Override
    public Cancellable schedule(Runnable task, Duration delay) {
      return fake.schedule(task, delay);
    }
  };
  private final ClientDetection detection = new ClientDetection(clock, PROBE_AFTER, ANSWER_WITHIN);

  /** A connection that records probes and its end, and answers probes when told to. */
  private final class Conn implements ClientDetection.Watched {
    long heard = clock.nanoTime();
    final List<Long> probes = new ArrayList<>();
    boolean answers;
    String closed;

    @Override
    public long lastHeardNanos() {
      return heard;
    }

    @Override
    public boolean isClosed() {
      return closed != null;
    }

    @Override
    public void probe(String requestId) {
      probes.add(clock.nanoTime());
      if (answers) {
        heard = clock.nanoTime();
      }
    }

    @Override
    public void close(String reason) {
      closed = reason;
    }
  }

  @Test
  void aSilentConnectionIsProbedAfterKeepaliveTimeAndEndedAfterTimePlusTimeout() {
    Conn c = new Conn();
    detection.watch(c);

    fake.advance(PROBE_AFTER.minusMillis(1));
    assertThat(c.probes).isEmpty();
    fake.advance(Duration.ofMillis(1));
    assertThat(c.probes).hasSize(1);
    fake.advance(ANSWER_WITHIN.minusMillis(1));
    assertThat(c.closed).isNull();
    fake.advance(Duration.ofMillis(1));
    assertThat(c.closed).contains("silent client").contains("no answer to a ClientDetectionRequest");
  }

  @Test
  void aConnectionThatAnswersOrTalksStays() {
    Conn answering = new Conn();
    answering.answers = true;
    Conn talking = new Conn();
    detection.watch(answering);
    detection.watch(talking);
    for (int i = 0; i < 10; i++) {
      fake.advance(Duration.ofSeconds(3));
      talking.heard = clock.nanoTime();
    }
    assertThat(answering.closed).isNull();
    assertThat(answering.probes).hasSizeGreaterThan(5);
    assertThat(talking.closed).isNull();
    assertThat(talking.probes).isEmpty();
  }

  /**
   * Regression: after the server itself was frozen (SIGSTOP, a long pause) every connection looks
   * silent at once. None is ended before it was probed and given --keepalive-timeout to answer.
   */
  @Test
  void afterAServerFreezeEveryConnectionIsProbedBeforeItIsEnded() {
    Conn live = new Conn();
    live.answers = true;
    Conn dead = new Conn();
    detection.watch(live);
    detection.watch(dead);
    fake.advance(Duration.ofSeconds(1));

    jumpNanos += Duration.ofSeconds(30).toNanos(); // the server was frozen for 30 s
    fake.advance(PROBE_AFTER);

    assertThat(live.probes).hasSize(1);
    assertThat(dead.probes).hasSize(1);
    assertThat(live.closed).isNull();
    assertThat(dead.closed).isNull();
    fake.advance(ANSWER_WITHIN);
    assertThat(live.closed).isNull();
    assertThat(dead.closed).isNotNull();
  }
}
