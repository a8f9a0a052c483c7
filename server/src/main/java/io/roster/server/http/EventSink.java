package io.roster.server.http;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * One open stream of server-sent events ({@code text/event-stream}): {@link #send} queues an
 * event and returns at once; the events are written one after another without holding a
 * thread. Bounded: a client that does not read falls {@link #MAX_QUEUED} events behind and its
 * stream is closed (an {@code EventSource} reconnects, and its page reloads what it shows). A
 * comment every {@link #PING_EVERY} keeps an idle stream open through proxies and the port's
 * idle timeout, and finds a client that has gone. Thread-safe.
 */
public final class EventSink {

  /** Events waiting to be written, at most. */
  public static final int MAX_QUEUED = 1024;
  /** How often an idle stream gets a comment line. */
  public static final Duration PING_EVERY = Duration.ofSeconds(10);

  private static final ByteBuffer PING = ByteBuffer.wrap(": ping\n\n".getBytes(StandardCharsets.UTF_8));

  private final Response response;
  private final Callback done;
  private final Scheduler scheduler;
  private final ArrayDeque<ByteBuffer> queue = new ArrayDeque<>(); // guarded by this
  private final List<Runnable> onClose = new CopyOnWriteArrayList<>();
  private boolean started; // guarded by this
  private boolean writing; // guarded by this
  private boolean closing; // guarded by this
  private boolean closed; // guarded by this
  private Scheduler.@Nullable Task ping; // guarded by this

  EventSink(Response response, Callback done, Scheduler scheduler) {
    this.response = response;
    this.done = done;
    this.scheduler = scheduler;
  }

  /** Starts the stream: its first bytes, then a ping whenever it has been idle. */
  synchronized void start() {
    started = true;
    queue.addFirst(PING.duplicate());
    if (!writing) {
      writeNext();
    }
  }

  /**
   * Queues one event; false when the stream is closed (or has just been closed for falling
   * behind).
   *
   * @param event the event's name ({@code event:} line)
   * @param data its data, one line (no line breaks)
   */
  public synchronized boolean send(String event, String data) {
    if (closed || closing) {
      return false;
    }
    if (queue.size() >= MAX_QUEUED) {
      fail(new IllegalStateException("the client fell " + MAX_QUEUED + " events behind"));
      return false;
    }
    queue.add(ByteBuffer.wrap(("event: " + event + "\ndata: " + data + "\n\n").getBytes(StandardCharsets.UTF_8)));
    if (started && !writing) {
      writeNext();
    }
    return true;
  }

  /** Runs {@code r} once when the stream ends, however it ends (at once if it has). */
  public void onClose(Runnable r) {
    boolean now;
    synchronized (this) {
      now = closed;
      if (!now) {
        onClose.add(r);
      }
    }
    if (now) {
      r.run();
    }
  }

  /** Ends the stream once what is queued has been written. */
  public synchronized void close() {
    if (closed || closing) {
      return;
    }
    closing = true;
    if (started && !writing) {
      finish();
    }
  }

  /** Whether the stream is still open. */
  public synchronized boolean isOpen() {
    return !closed && !closing;
  }

  private void writeNext() { // holding this
    ByteBuffer next = queue.poll();
    if (next == null) {
      writing = false;
      if (closing) {
        finish();
      } else {
        schedulePing();
      }
      return;
    }
    writing = true;
    cancelPing();
    response.write(false, next, Callback.from(this::written, this::failed));
  }

  private synchronized void written() {
    if (!closed) {
      writeNext();
    }
  }

  private synchronized void failed(Throwable x) {
    fail(x);
  }

  private void schedulePing() { // holding this
    ping = scheduler.schedule(this::ping, PING_EVERY.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void cancelPing() { // holding this
    if (ping != null) {
      ping.cancel();
      ping = null;
    }
  }

  private synchronized void ping() {
    if (!closed && !closing && !writing && queue.isEmpty()) {
      queue.add(PING.duplicate());
      writeNext();
    }
  }

  private void finish() { // holding this
    closed = true;
    cancelPing();
    response.write(true, null, done);
    runOnClose();
  }

  private void fail(Throwable x) { // holding this
    if (closed) {
      return;
    }
    closed = true;
    cancelPing();
    queue.clear();
    done.failed(x);
    runOnClose();
  }

  private void runOnClose() {
    for (Runnable r : onClose) {
      r.run();
    }
    onClose.clear();
  }
}
