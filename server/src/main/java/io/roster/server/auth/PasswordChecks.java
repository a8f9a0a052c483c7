package io.roster.server.auth;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The threads that check passwords, off every transport and handler thread (decision 79): a
 * check is tens of milliseconds of CPU by design (PBKDF2), and a login waiting for one holds
 * nothing but its request. Two bounded queues: logins of usernames proven from their host ({@link
 * Guesses}) and the others. One thread takes the proven logins first and then the others; a
 * second takes only proven logins, so that a user who logged in from a host before never waits
 * behind a guess under way, and at most one check of an unproven login runs at a time, however
 * many hosts guess. A full queue refuses the login at once ({@link #offer} returns false), and
 * {@link #retryAfter} says when the queue is likely to have room.
 *
 * <p>Thread-safe; the checks run on two daemon threads of their own, started by the constructor
 * and ended by {@link #close}, which abandons the checks still waiting.
 */
final class PasswordChecks implements AutoCloseable {

  /** Checks waiting per queue at most (proven logins, others). */
  static final int QUEUE = 16;

  private static final Logger log = LoggerFactory.getLogger(PasswordChecks.class);

  /** A check to run, or to abandon when the server stops before its turn. */
  interface Check {
    void run();

    void abandon();
  }

  private final LongSupplier nanoTime;
  private final ArrayDeque<Check> proven = new ArrayDeque<>();
  private final ArrayDeque<Check> others = new ArrayDeque<>();
  /** How long the last check took: the estimate of a check's cost for {@link #retryAfter}. */
  private volatile long lastCheckNanos = TimeUnit.MILLISECONDS.toNanos(100);
  private boolean closed; // guarded by this

  /** @param nanoTime the clock checks are timed with (the server's scheduler) */
  PasswordChecks(LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
    List<Thread> workers = List.of(new Thread(() -> work(false), "roster-password-checks"),
        new Thread(() -> work(true), "roster-password-checks-proven"));
    workers.forEach(w -> {
      w.setDaemon(true);
      w.start();
    });
  }

  /**
   * Queues {@code check} (among the proven logins' when {@code provenLogin}).
   *
   * @return false, without queueing it, when its queue is full or the checks have stopped
   */
  synchronized boolean offer(boolean provenLogin, Check check) {
    ArrayDeque<Check> queue = provenLogin ? proven : others;
    if (closed || queue.size() >= QUEUE) {
      return false;
    }
    queue.add(check);
    notifyAll();
    return true;
  }

  /** When a login refused for a full queue should try again: the checks waiting, at the last check's cost. */
  synchronized Duration retryAfter() {
    long waiting = proven.size() + others.size() + 1L;
    return Duration.ofSeconds(Math.max(1, TimeUnit.NANOSECONDS.toSeconds(waiting * lastCheckNanos) + 1));
  }

  private void work(boolean provenOnly) {
    while (true) {
      Check next = take(provenOnly);
      if (next == null) {
        return;
      }
      long start = nanoTime.getAsLong();
      try {
        next.run();
      } catch (RuntimeException e) {
        log.warn("A password check failed", e);
      }
      lastCheckNanos = Math.max(1, nanoTime.getAsLong() - start);
    }
  }

  private synchronized @Nullable Check take(boolean provenOnly) {
    while (!closed && proven.isEmpty() && (provenOnly || others.isEmpty())) {
      try {
        wait();
      } catch (InterruptedException e) {
        return null;
      }
    }
    if (closed) {
      return null;
    }
    return proven.isEmpty() ? others.poll() : proven.poll();
  }

  /** Stops taking checks and abandons those still waiting; the one under way finishes. Idempotent. */
  @Override
  public void close() {
    List<Check> left = new ArrayList<>();
    synchronized (this) {
      closed = true;
      left.addAll(proven);
      left.addAll(others);
      proven.clear();
      others.clear();
      notifyAll();
    }
    left.forEach(Check::abandon);
  }
}
