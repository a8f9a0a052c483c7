package io.roster.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BackoffTest {

  private static final Duration INITIAL = Duration.ofMillis(100);
  private static final Duration MAX = Duration.ofSeconds(5);

  @Test
  void ceilingDoublesFromInitialToMax() {
    Backoff b = new Backoff(INITIAL, MAX, new Random(1));
    long[] expectedMillis = {100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000};
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
