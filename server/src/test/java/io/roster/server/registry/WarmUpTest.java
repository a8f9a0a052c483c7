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

  // --- The reconnect storm (decision 88) ---

  /**
   * The quiet period starts with the first client back: on a loaded machine the first ones took
   * 6 s after the port opened, and a quiet period counted from the opening ended the warm-up
   * before anyone was back. Until then only the window ends it.
   */
  @Test
  void theQuietPeriodStartsWithTheFirstArrivalAndTheWindowBoundsAServerNobodyComesBackTo() {
    WarmUp w = WarmUp.pending(scheduler, Duration.ofSeconds(30), Duration.ofSeconds(3));
    AtomicInteger told = new AtomicInteger();
    w.onWarm(told::incrementAndGet);
    w.arrived(); // before the port opens: nothing
    w.begin();
    scheduler.advance(Duration.ofSeconds(6));
    assertThat(w.isWarm()).as("nobody back yet").isFalse();
    assertThat(w.remaining()).as("clients are told the bound").isEqualTo(Duration.ofSeconds(24));
    w.arrived();
    scheduler.advance(Duration.ofMillis(2999));
    assertThat(w.isWarm()).isFalse();
    scheduler.advance(Duration.ofMillis(1));
    assertThat(w.isWarm()).as("3 s after the only arrival").isTrue();
    assertThat(told).hasValue(1);
    scheduler.advance(Duration.ofSeconds(60));
    assertThat(told).as("the window's timer was cancelled").hasValue(1);

    WarmUp nobody = WarmUp.pending(scheduler, Duration.ofSeconds(30), Duration.ofSeconds(3));
    nobody.begin();
    scheduler.advance(Duration.ofMillis(29_999));
    assertThat(nobody.isWarm()).isFalse();
    scheduler.advance(Duration.ofMillis(1));
    assertThat(nobody.isWarm()).as("the window").isTrue();
  }

  /**
   * A slow storm on a loaded machine: clients keep coming back for longer than a fixed window
   * would have lasted, and the warm-up lasts until a quiet period after the last of them.
   */
  @Test
  void eachArrivalStartsTheQuietPeriodAgainSoASlowStormIsWaitedFor() {
    WarmUp w = WarmUp.pending(scheduler, Duration.ofSeconds(30), Duration.ofSeconds(3));
    w.begin();
    for (int i = 0; i < 6; i++) { // one client every 2 s, for 12 s: past the old 5 s window
      scheduler.advance(Duration.ofSeconds(2));
      w.arrived();
      assertThat(w.isWarm()).as("client %d is back at %d s", i, 2 * (i + 1)).isFalse();
    }
    scheduler.advance(Duration.ofMillis(2999));
    assertThat(w.isWarm()).isFalse();
    scheduler.advance(Duration.ofMillis(1));
    assertThat(w.isWarm()).as("3 s after the last arrival").isTrue();
    assertThat(w.remaining()).isZero();
    w.arrived(); // once warm: nothing
    assertThat(w.isWarm()).isTrue();
  }

  /** The window is the bound: a storm that never ends does not hold the warm-up past it. */
  @Test
  void arrivalsNeverHoldItPastTheWindow() {
    WarmUp w = WarmUp.pending(scheduler, Duration.ofSeconds(10), Duration.ofSeconds(3));
    AtomicInteger told = new AtomicInteger();
    w.onWarm(told::incrementAndGet);
    w.begin();
    for (int i = 0; i < 9; i++) {
      scheduler.advance(Duration.ofSeconds(1));
      w.arrived();
    }
    assertThat(w.isWarm()).isFalse();
    assertThat(w.remaining()).isEqualTo(Duration.ofSeconds(1));
    scheduler.advance(Duration.ofMillis(999));
    w.arrived();
    scheduler.advance(Duration.ofMillis(1));
    assertThat(w.isWarm()).isTrue();
    assertThat(told).hasValue(1);
    scheduler.advance(Duration.ofSeconds(10));
    assertThat(told).as("the quiet period's timer was cancelled").hasValue(1);
  }

  /** A quiet period of zero (or one as long as the window) is the fixed window of before. */
  @Test
  void aZeroQuietPeriodLeavesTheWholeWindow() {
    for (Duration quiet : new Duration[] {Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(9)}) {
      FakeScheduler time = new FakeScheduler();
      WarmUp w = WarmUp.pending(time, Duration.ofSeconds(5), quiet);
      w.begin();
      time.advance(Duration.ofMillis(4999));
      assertThat(w.isWarm()).as("quiet %s", quiet).isFalse();
      time.advance(Duration.ofMillis(1));
      assertThat(w.isWarm()).as("quiet %s", quiet).isTrue();
    }
    assertThatThrownBy(() -> WarmUp.pending(scheduler, Duration.ofSeconds(5), Duration.ofSeconds(-1)))
        .hasMessage("warm-up quiet period: PT-1S (expected: >= 0)");
  }

  /** Ended early by the cluster layer (caught up): the quiet period's timer goes too. */
  @Test
  void endedEarlyItTellsOnceAndCancelsTheQuietTimer() {
    WarmUp w = WarmUp.pending(scheduler, Duration.ofSeconds(30), Duration.ofSeconds(3));
    AtomicInteger told = new AtomicInteger();
    w.onWarm(told::incrementAndGet);
    w.begin();
    w.arrived();
    w.warmUpDone();
    assertThat(scheduler.pendingDelaysNanos()).isEmpty();
    scheduler.advance(Duration.ofSeconds(40));
    assertThat(told).hasValue(1);
  }
}
