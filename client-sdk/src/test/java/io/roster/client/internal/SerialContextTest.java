package io.roster.client.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.roster.server.testing.LogLines;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The client's serial context: tasks one at a time in the order they were added, never
 * re-entrant, a failing task does not stop the next, and a thread that adds a task (a transport
 * thread with a stream's event) never waits for another thread's queue; only {@code call} waits.
 */
class SerialContextTest {

  private static final Duration BOUND = Duration.ofSeconds(10);

  private final SerialContext context = new SerialContext();
  private final List<String> ran = new CopyOnWriteArrayList<>();
  private final ExecutorService threads = Executors.newFixedThreadPool(2);

  @AfterEach
  void tearDown() throws InterruptedException {
    threads.shutdownNow();
    assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void tasksRunOneAtATimeInTheOrderTheyWereAdded() {
    context.execute(() -> ran.add("1"));
    context.execute(() -> ran.add("2"));
    context.run(() -> ran.add("3"));
    context.execute(() -> ran.add("4"));

    assertThat(ran).containsExactly("1", "2", "3", "4");
  }

  @Test
  void anIdleContextRunsATaskOnTheThreadThatAddsItBeforeExecuteReturns() {
    AtomicReference<Thread> ranOn = new AtomicReference<>();

    context.execute(() -> ranOn.set(Thread.currentThread()));

    assertThat(ranOn.get()).isSameAs(Thread.currentThread());
    assertThat(context.inContext()).isFalse();
  }

  @Test
  void aTaskThatAddsATaskDoesNotRunItButItRunsNextInOrder() {
    context.execute(() -> {
      ran.add("outer start");
      assertThat(context.inContext()).isTrue();
      context.execute(() -> ran.add("inner"));
      context.execute(() -> ran.add("inner 2"));
      ran.add("outer end");
    });

    assertThat(ran).containsExactly("outer start", "outer end", "inner", "inner 2");
  }

  @Test
  void aTaskCannotWaitForAnotherTask() {
    AtomicReference<Throwable> refused = new AtomicReference<>();
    context.execute(() -> {
      try {
        context.call(() -> "never");
      } catch (IllegalStateException e) {
        refused.set(e);
      }
    });

    assertThat(refused.get()).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot wait for another");
  }

  @Test
  void aTaskThatThrowsIsLoggedAndTheNextOneRuns() {
    try (LogLines warnings = new LogLines(SerialContext.class, Level.WARN)) {
      context.execute(() -> {
        context.execute(() -> ran.add("after the failure"));
        throw new IllegalStateException("boom");
      });

      context.execute(() -> ran.add("next"));

      assertThat(ran).containsExactly("after the failure", "next");
      assertThat(warnings.lines()).containsExactly("A task of the Roster client failed");
    }
  }

  @Test
  void aFailedCallThrowsOnTheCallersThreadAndTheContextGoesOn() {
    try (LogLines warnings = new LogLines(SerialContext.class, Level.WARN)) {
      assertThatThrownBy(() -> context.call(() -> {
        throw new IllegalArgumentException("refused");
      })).isInstanceOf(IllegalArgumentException.class).hasMessage("refused");

      assertThat(context.call(() -> "next")).isEqualTo("next");
      assertThat(warnings.lines()).isEmpty();
    }
  }

  /**
   * Thread A runs a long task in the context; thread B, a transport thread with a stream's
   * event, adds a task meanwhile and returns at once, while A's task still runs. A then runs the
   * event after its own task, in order.
   */
  @Test
  void aTransportThreadNeverWaitsBehindAnotherThreadsTask() throws Exception {
    CountDownLatch aRunning = new CountDownLatch(1);
    CountDownLatch releaseA = new CountDownLatch(1);
    AtomicReference<Thread> eventRanOn = new AtomicReference<>();
    Future<?> a = threads.submit(() -> context.run(() -> {
      aRunning.countDown();
      awaitUninterruptibly(releaseA);
      ran.add("A's task");
    }));
    assertThat(aRunning.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();

    Future<?> b = threads.submit(() -> context.execute(() -> {
      eventRanOn.set(Thread.currentThread());
      ran.add("B's event");
    }));

    await().atMost(BOUND).until(b::isDone);
    b.get();
    assertThat(a.isDone()).isFalse();
    assertThat(ran).isEmpty();

    releaseA.countDown();
    a.get(BOUND.toSeconds(), TimeUnit.SECONDS);
    assertThat(ran).containsExactly("A's task", "B's event");
    assertThat(eventRanOn.get()).isNotNull();
  }

  /** An API call waits for its result even when another thread runs the queue. */
  @Test
  void aCallWaitsForItsResultRunByTheThreadAlreadyInTheContext() throws Exception {
    CountDownLatch aRunning = new CountDownLatch(1);
    CountDownLatch releaseA = new CountDownLatch(1);
    Future<?> a = threads.submit(() -> context.run(() -> {
      aRunning.countDown();
      awaitUninterruptibly(releaseA);
      ran.add("A's task");
    }));
    assertThat(aRunning.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();

    Future<String> caller = threads.submit(() -> context.call(() -> {
      ran.add("call");
      return "answer";
    }));
    assertThat(caller.isDone()).isFalse();

    releaseA.countDown();
    assertThat(caller.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isEqualTo("answer");
    a.get(BOUND.toSeconds(), TimeUnit.SECONDS);
    assertThat(ran).containsExactly("A's task", "call");
  }

  @Test
  void aTimerCancelledFromATaskDoesNotRunEvenWhenDue() {
    FakeClock clock = new FakeClock();
    SerialContext.Timer kept = context.call(
        () -> context.schedule(() -> ran.add("kept"), 1, TimeUnit.SECONDS, clock.scheduler()));
    SerialContext.Timer cancelled = context.call(
        () -> context.schedule(() -> ran.add("cancelled"), 1, TimeUnit.SECONDS, clock.scheduler()));

    context.run(cancelled::cancel);
    clock.forward(Duration.ofSeconds(1));

    assertThat(ran).containsExactly("kept");
    assertThat(context.call(kept::isPending)).isFalse();
    assertThat(context.call(cancelled::isPending)).isFalse();
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    try {
      if (!latch.await(3 * BOUND.toSeconds(), TimeUnit.SECONDS)) {
        throw new AssertionError("not released");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
