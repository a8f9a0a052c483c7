package io.roster.server.http;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * Closes a connection whose request is still arriving (its headers or its body) a deadline after
 * its first byte was seen: Jetty's idle timeout cuts only a silent client, and one that trickles
 * a byte a second never goes silent. Checked once a second, so a request gets its deadline plus
 * at most a second. A connection between requests is left to the idle timeout.
 *
 * <p>A bean of the connector: Jetty hands it every connection as it opens and closes. Thread-safe.
 */
final class SlowRequests extends AbstractLifeCycle implements Connection.Listener {

  private static final Duration CHECK_EVERY = Duration.ofSeconds(1);

  private final Scheduler scheduler;
  private final long deadlineNanos;
  /** Where each connection cut is counted ({@link HttpRefusals.Reason#SLOW}). */
  private final HttpRefusals refusals;
  /** Each open HTTP connection, and the request that was arriving when last checked (or null). */
  private final Map<HttpConnection, @Nullable Arrival> open = new ConcurrentHashMap<>();
  private volatile Scheduler.@Nullable Task next;

  /** The request a connection was reading: its number on the connection, and when it was first seen. */
  private record Arrival(long request, long sinceNanos) {}

  SlowRequests(Scheduler scheduler, Duration deadline, HttpRefusals refusals) {
    this.scheduler = scheduler;
    this.refusals = refusals;
    this.deadlineNanos = deadline.toNanos();
  }

  @Override
  protected void doStart() {
    schedule();
  }

  @Override
  protected void doStop() {
    Scheduler.Task t = next;
    if (t != null) {
      t.cancel();
    }
    open.clear();
  }

  @Override
  public void onOpened(Connection connection) {
    if (connection instanceof HttpConnection http) {
      open.put(http, NOTHING);
    }
  }

  @Override
  public void onClosed(Connection connection) {
    open.remove(connection);
  }

  /** Connections open now (for tests). */
  int tracked() {
    return open.size();
  }

  private void schedule() {
    if (isRunning() || isStarting()) {
      next = scheduler.schedule(this::check, CHECK_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  private void check() {
    try {
      long now = io.roster.server.time.SystemScheduler.systemNanoTime();
      open.replaceAll((http, seen) -> {
        HttpParser parser = http.getParser();
        boolean arriving = !parser.isStart() && (parser.inHeaderState() || parser.inContentState());
        if (!arriving) {
          return NOTHING;
        }
        long request = http.getMessagesIn();
        if (seen.request() != request) {
          return new Arrival(request, now);
        }
        if (now - seen.sinceNanos() > deadlineNanos && http.getEndPoint().isOpen()) {
          refusals.count(HttpRefusals.Reason.SLOW);
          http.getEndPoint().close();
        }
        return seen;
      });
    } finally {
      schedule();
    }
  }

  private static final Arrival NOTHING = new Arrival(-1, 0);
}
