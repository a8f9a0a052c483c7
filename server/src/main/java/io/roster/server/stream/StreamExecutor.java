package io.roster.server.stream;

import io.grpc.netty.shaded.io.netty.util.internal.ThreadExecutorMap;
import io.roster.server.time.Scheduler;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stream's own serial executor: the thread its messages are handled on, so that what it
 * writes later (an answer that waited for the cluster's log) is written there too, in the
 * order it was handed over, and never by the thread that completed the wait (decision 94).
 *
 * <p>On the server's gRPC port that thread is the transport's event loop: calls run there
 * (decision 13), and every stream of one connection has the same one. {@link #current} takes
 * it as the stream opens. Called elsewhere (no event loop), it is a serial executor of its
 * own over the scheduler's threads.
 *
 * <p>Thread-safe. {@link #execute} never throws: a task refused because the transport has
 * stopped (the server stops) is dropped, as its stream is gone.
 */
public final class StreamExecutor implements Executor {

  private static final Logger log = LoggerFactory.getLogger(StreamExecutor.class);

  private final Executor serial;

  private StreamExecutor(Executor serial) {
    this.serial = serial;
  }

  /**
   * The calling thread's event loop, when it is one (a gRPC call's thread on the server);
   * else a serial executor over {@code fallback}'s threads.
   */
  public static StreamExecutor current(Scheduler fallback) {
    Executor loop = eventLoop();
    return new StreamExecutor(loop != null ? loop : new Serial(fallback::execute));
  }

  /** Tasks run on {@code serial}, which must run them one at a time in the order given (a test's one thread). */
  public static StreamExecutor of(Executor serial) {
    return new StreamExecutor(serial);
  }

  @Override
  public void execute(Runnable task) {
    try {
      serial.execute(task);
    } catch (RejectedExecutionException e) {
      log.debug("A stream's task was dropped: its transport has stopped", e);
    }
  }

  /** The event loop running the calling thread, or null. */
  private static @Nullable Executor eventLoop() {
    return ThreadExecutorMap.currentExecutor();
  }

  /** Runs tasks one at a time, in the order given, on a delegate's threads. */
  private static final class Serial implements Executor {
    private final Executor delegate;
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>(); // guarded by this
    private boolean running; // guarded by this

    Serial(Executor delegate) {
      this.delegate = delegate;
    }

    @Override
    public void execute(Runnable task) {
      synchronized (this) {
        tasks.add(task);
        if (running) {
          return;
        }
        running = true;
      }
      delegate.execute(this::drain);
    }

    private void drain() {
      while (true) {
        Runnable next;
        synchronized (this) {
          next = tasks.poll();
          if (next == null) {
            running = false;
            return;
          }
        }
        try {
          next.run();
        } catch (RuntimeException e) {
          log.error("A stream's task failed", e);
        }
      }
    }
  }
}
