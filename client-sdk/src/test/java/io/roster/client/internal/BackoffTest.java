package io.roster.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.RosterClient;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The reconnect back-off, at the SDK's default settings (100 ms .. 3 s). */
class BackoffTest {

  private static final Duration INITIAL = Duration.ofMillis(100);
  private static final Duration MAX = Duration.ofSeconds(3);

  /**
   * The documented defaults (RosterClient.Builder#reconnectBackoff, docs): the back-off starts at
   * 100 ms and is capped at 3 s, so after an outage every client is back within about 3 s of
   * the server; the default empty hold (4 s) counts on that and must stay longer than the cap.
   * Read from a fresh builder, the only place the defaults live.
   */
  @Test
  void theSdkDefaultCapIsThreeSecondsAndStaysBelowTheDefaultEmptyHold() throws Exception {
    RosterClient.Builder defaults = RosterClient.builder();
    Duration initial = builderDefault(defaults, "reconnectInitial");
    Duration max = builderDefault(defaults, "reconnectMax");
    Duration hold = builderDefault(defaults, "reconnectEmptyHold");

    assertThat(initial).isEqualTo(INITIAL);
    assertThat(max).isEqualTo(MAX);
    assertThat(hold).isEqualTo(Duration.ofSeconds(4));
    assertThat(max).as("the reconnect cap is below the empty hold it protects").isLessThan(hold);

    Backoff top = new Backoff(initial, max, fixedRandom(0.999_999_999_9));
    Duration longest = Duration.ZERO;
    for (int i = 0; i < 100; i++) {
      Duration d = top.next();
      longest = d.compareTo(longest) > 0 ? d : longest;
    }
    assertThat(longest).as("the longest wait at the top of the jitter").isEqualTo(Duration.ofSeconds(3));
  }

  private static Duration builderDefault(RosterClient.Builder builder, String field) throws Exception {
    Field f = RosterClient.Builder.class.getSuperclass().getDeclaredField(field);
    f.setAccessible(true);
    return (Duration) f.get(builder);
  }

  @Test
  void ceilingDoublesFromInitialToMax() {
    Backoff b = new Backoff(INITIAL, MAX, new Random(1));
    long[] expectedMillis = {100, 200, 400, 800, 1600, 3000, 3000, 3000, 3000};
    for (int n = 0; n < expectedMillis.length; n++) {
      assertThat(Duration.ofNanos(b.ceilingNanos(n)).toMillis()).as("attempt %d", n)
          .isEqualTo(expectedMillis[n]);
    }
    assertThat(b.ceilingNanos(1000)).isEqualTo(MAX.toNanos());
  }

  @Test
  void everyDelayIsJitteredWithinZeroAndTheCeiling() {
    Backoff b = new Backoff(INITIAL, MAX, new Random(42));
    long distinct = 0;
    long previous = -1;
    for (int n = 0; n < 50; n++) {
      Duration d = b.next();
      assertThat(d).as("attempt %d", n)
          .isBetween(Duration.ZERO, Duration.ofNanos(b.ceilingNanos(n)));
      if (d.toNanos() != previous) {
        distinct++;
      }
      previous = d.toNanos();
    }
    assertThat(distinct).as("jitter spreads the delays").isGreaterThan(40);
    assertThat(b.attempts()).isEqualTo(50);
  }

  @Test
  void extremesOfTheRandomSourceHitTheBounds() {
    Backoff top = new Backoff(INITIAL, MAX, fixedRandom(0.999_999_999_9));
    assertThat(top.next()).isEqualTo(INITIAL);
    assertThat(top.next()).isEqualTo(Duration.ofMillis(200));
    Backoff bottom = new Backoff(INITIAL, MAX, fixedRandom(0.0));
    assertThat(bottom.next()).isEqualTo(Duration.ZERO);
  }

  @Test
  void resetStartsOverAtTheInitialCeiling() {
    Backoff b = new Backoff(INITIAL, MAX, fixedRandom(0.999_999_999_9));
    for (int i = 0; i < 10; i++) {
      b.next();
    }
    assertThat(b.next()).isEqualTo(MAX);
    b.reset();
    assertThat(b.attempts()).isZero();
    assertThat(b.next()).isEqualTo(INITIAL);
  }

  private static Random fixedRandom(double value) {
    return new Random() {
      private static final long serialVersionUID = 1L;

      @Override
      public double nextDouble() {
        return value;
      }
    };
  }
}
