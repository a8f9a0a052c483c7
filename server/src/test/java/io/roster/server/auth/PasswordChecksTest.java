package io.roster.server.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.testing.TestTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The password checks' threads and queues: a proven user's check never waits behind a guess under
 * way, the queues are bounded, and a stop abandons what waits.
 */
class PasswordChecksTest {

  private final PasswordChecks checks = new PasswordChecks(System::nanoTime);
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void tearDown() {
    release.countDown();
    checks.close();
  }

  @Test
  void aProvenLoginIsCheckedWhileAGuessIsUnderWay() throws Exception {
    CountDownLatch guessing = new CountDownLatch(1);
    assertThat(checks.offer(false, check(() -> {
      guessing.countDown();
      awaitRelease();
    }, new CompletableFuture<>()))).isTrue();
    assertThat(guessing.await(TestTime.seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();

    CompletableFuture<String> proven = new CompletableFuture<>();
    assertThat(checks.offer(true, check(() -> proven.complete("checked"), new CompletableFuture<>()))).isTrue();

    assertThat(proven.get(TestTime.seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("checked");
  }

  @Test
  void eachQueueIsBoundedAndAStopAbandonsWhatWaits() throws Exception {
    // Both threads busy: a guess first (the proven logins' thread never takes one), then a proven login.
    for (boolean proven : new boolean[] {false, true}) {
      CountDownLatch running = new CountDownLatch(1);
      checks.offer(proven, check(() -> {
        running.countDown();
        awaitRelease();
      }, new CompletableFuture<>()));
      assertThat(running.await(TestTime.seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    List<CompletableFuture<String>> waiting = new ArrayList<>();
    for (int i = 0; i < PasswordChecks.QUEUE; i++) {
      CompletableFuture<String> f = new CompletableFuture<>();
      assertThat(checks.offer(false, check(() -> f.complete("checked"), f))).isTrue();
      waiting.add(f);
    }
    assertThat(checks.offer(false, check(() -> { }, new CompletableFuture<>()))).isFalse();
    assertThat(checks.offer(true, check(() -> { }, new CompletableFuture<>()))).as("the other queue").isTrue();
    assertThat(checks.retryAfter().toSeconds()).isPositive();

    checks.close();
    assertThat(waiting).allMatch(f -> f.getNow("").equals("abandoned"));
    assertThat(checks.offer(true, check(() -> { }, new CompletableFuture<>()))).isFalse();
  }

  private void awaitRelease() {
    try {
      release.await(TestTime.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static PasswordChecks.Check check(Runnable run, CompletableFuture<String> abandoned) {
    return new PasswordChecks.Check() {
      @Override
      public void run() {
        run.run();
      }

      @Override
      public void abandon() {
        abandoned.complete("abandoned");
      }
    };
  }
}
