package io.roster.server.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The warm-up after a start: a window, and an explicit state that can end early. */
class WarmUpTest {

  private final FakeScheduler scheduler = new FakeScheduler();

  @Test
  void warmsUpForTheWindowThenTellsItsListenersOnce() {
    WarmUp w = WarmUp.start(scheduler, Duration.ofSeconds(5));
    AtomicInteger told = new AtomicInteger();
    w.onWarm(told::incrementAndGet);
    assertThat(w.isWarm()).isFalse();
    assertThat(w.remaining()).isEqualTo(Duration.ofSeconds(5));

    scheduler.advance(Duration.ofSeconds(2));
    assertThat(w.remaining()).isEqualTo(Duration.ofSeconds(3));
    assertThat(told).hasValue(0);

    scheduler.advance(Duration.ofSeconds(3));
    assertThat(w.isWarm()).isTrue();
    assertThat(w.remaining()).isZero();
    assertThat(told).hasValue(1);
    w.warmUpDone();
    assertThat(told).as("once").hasValue(1);
  }

  @Test
  void aClusterLayerCanEndItEarly() {
    WarmUp w = WarmUp.start(scheduler, Duration.ofSeconds(5));
    AtomicInteger told = new AtomicInteger();
    w.onWarm(told::incrementAndGet);
    scheduler.advance(Duration.ofSeconds(1));

    w.warmUpDone(); // e.g. caught up from the log
    assertThat(w.isWarm()).isTrue();
    assertThat(w.remaining()).isZero();
    assertThat(told).hasValue(1);
    scheduler.advance(Duration.ofSeconds(10));
    assertThat(told).as("the window's timer was cancelled").hasValue(1);
  }

  @Test
  void aZeroWindowIsWarmFromTheStart() {
    assertThat(WarmUp.start(scheduler, Duration.ZERO).isWarm()).isTrue();
    assertThat(WarmUp.warm(scheduler).remaining()).isZero();
    assertThatThrownBy(() -> WarmUp.start(scheduler, Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * A server's window runs from its port's opening, not from its construction: a start that is
   * slow before the port opens (priming, a cluster member's catch-up) must not shorten it.
   */
  @Test
  void aPendingWarmUpRunsItsWholeWindowFromBegin() {
    WarmUp w = WarmUp.pending(scheduler, Duration.ofSeconds(5));
    scheduler.advance(Duration.ofSeconds(3));
    assertThat(w.isWarm()).isFalse();
    assertThat(w.remaining()).isEqualTo(Duration.ofSeconds(5));
    w.begin();
    scheduler.advance(Duration.ofMillis(4999));
    assertThat(w.isWarm()).isFalse();
    scheduler.advance(Duration.ofMillis(1));
    assertThat(w.isWarm()).isTrue();
  }
}
