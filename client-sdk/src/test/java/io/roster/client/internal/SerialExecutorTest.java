package io.roster.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.roster.server.testing.LogLines;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The listener events' serial executor: tasks in order, one run at a time on the delegate, never
 * on the thread that adds them; a task that adds a task has it run after it in the same run; a
 * failing task does not stop the next; a rejection drops what was queued.
 */
class SerialExecutorTest {

  /** A delegate that keeps what it is given until the test runs it. */
  private static final class Held implements Executor {
    final Queue<Runnable> given = new ArrayDeque<>();

    @Override
    public void execute(Runnable command) {
      given.add(command);
    }

    void runAll() {
      Runnable r;
      while ((r = given.poll()) != null) {
        r.run();
      }
    }
  }

  private final List<String> ran = new CopyOnWriteArrayList<>();
  private final Held delegate = new Held();

  @Test
  void tasksRunInTheOrderTheyWereAddedInOneRunOnTheDelegate() {
    SerialExecutor serial = new SerialExecutor(delegate);
    serial.add(() -> ran.add("1"));
    serial.drain();
    serial.add(() -> ran.add("2"));
    serial.drain();
    serial.add(() -> ran.add("3"));

    assertThat(ran).isEmpty();
    assertThat(delegate.given).hasSize(1);

    delegate.runAll();

    assertThat(ran).containsExactly("1", "2", "3");
  }

  @Test
  void aTaskThatAddsATaskHasItRunAfterItselfInTheSameRun() {
    SerialExecutor serial = new SerialExecutor(delegate);
    serial.add(() -> {
      ran.add("outer start");
      serial.add(() -> ran.add("inner"));
      serial.drain();
      ran.add("outer end");
    });
    serial.drain();

    delegate.runAll();

    assertThat(ran).containsExactly("outer start", "outer end", "inner");
  }

  @Test
  void aTaskThatThrowsIsLoggedAndTheNextOneRuns() {
    SerialExecutor serial = new SerialExecutor(delegate);
    try (LogLines warnings = new LogLines(SerialExecutor.class, Level.WARN)) {
      serial.add(() -> {
        throw new IllegalStateException("a listener failed");
      });
      serial.add(() -> ran.add("next"));
      serial.drain();

      delegate.runAll();

      assertThat(ran).containsExactly("next");
      assertThat(warnings.lines()).containsExactly("A queued task failed");
    }
  }

  @Test
  void theThreadThatAddsNeverWaitsForARunningTask() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      SerialExecutor serial = new SerialExecutor(pool);
      CountDownLatch firstRunning = new CountDownLatch(1);
      CountDownLatch releaseFirst = new CountDownLatch(1);
      CountDownLatch secondRan = new CountDownLatch(1);
      serial.add(() -> {
        firstRunning.countDown();
        awaitUninterruptibly(releaseFirst);
        ran.add("first");
      });
      serial.drain();
      assertThat(firstRunning.await(10, TimeUnit.SECONDS)).isTrue();

      serial.add(() -> {
        ran.add("second");
        secondRan.countDown();
      });
      serial.drain(); // returns while the first still runs

      assertThat(ran).isEmpty();
      releaseFirst.countDown();
      assertThat(secondRan.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(ran).containsExactly("first", "second");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aRejectionDropsWhatWasQueuedAndTheNextTaskRuns() {
    AtomicInteger dropped = new AtomicInteger();
    AtomicInteger rejections = new AtomicInteger(1);
    Executor rejectingOnce = command -> {
      if (rejections.getAndDecrement() > 0) {
        throw new RejectedExecutionException("full");
      }
      command.run();
    };
    SerialExecutor serial = new SerialExecutor(rejectingOnce, dropped::incrementAndGet);
    serial.add(() -> ran.add("dropped"));
    serial.drain();

    serial.add(() -> ran.add("later"));
    serial.drain();

    assertThat(dropped.get()).isEqualTo(1);
    assertThat(ran).containsExactly("later");
  }

  @Test
  void clearDropsTasksNotStarted() {
    AtomicInteger dropped = new AtomicInteger();
    SerialExecutor serial = new SerialExecutor(delegate, dropped::incrementAndGet);
    serial.add(() -> ran.add("cleared"));
    serial.clear();
    serial.drain();

    delegate.runAll();

    assertThat(ran).isEmpty();
    assertThat(dropped.get()).isEqualTo(1);
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    try {
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new AssertionError("not released");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
