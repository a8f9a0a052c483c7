package io.roster.server.http;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * One open stream of server-sent events ({@code text/event-stream}): {@link #send} queues an
 * event and returns at once; the events are written one after another without holding a
 * thread. An event sent with a key replaces the one of that key still waiting to be written, so
 * a slow reader gets the latest of each key once. Bounded: a client that falls {@link
 * #MAX_QUEUED} events behind all the same has its stream closed (an {@code EventSource} reconnects, and its page reloads what it shows). A
 * comment every {@link #PING_EVERY} keeps an idle stream open through proxies and the port's
 * idle timeout, and finds a client that has gone. Thread-safe.
 */
public final class EventSink {

  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(EventSink.class);

  /** Events waiting to be written, at most. */
  public static final int MAX_QUEUED = 1024;
  /** How often an idle stream gets a comment line. */
  public static final Duration PING_EVERY = Duration.ofSeconds(10);

  private static final ByteBuffer PING = ByteBuffer.wrap(": ping\n\n".getBytes(StandardCharsets.UTF_8));

  private final Response response;
  private final Callback done;
  private final Scheduler scheduler;
  /** What waits to be written: encoded events ({@link ByteBuffer}) and keyed ones ({@link Queued}); guarded by this. */
  private final ArrayDeque<Object> queue = new ArrayDeque<>();
  /** The queued events that a later one of the same key replaces, by key; guarded by this. */
  private final Map<String, Queued> latest = new HashMap<>();
  private final List<Runnable> onClose = new CopyOnWriteArrayList<>();
  private boolean started; // guarded by this
  private boolean writing; // guarded by this
  private boolean closing; // guarded by this
  private boolean closed; // guarded by this
  private Scheduler.@Nullable Task ping; // guarded by this

  /**
   * Answers {@code request} with {@code stream}'s events, keeping the sink in {@code openSinks}
   * while it is open; a refusal of {@code stream} (or a method other than GET) is answered as a
   * plain error instead. Runs on an HTTP worker thread.
   */
  static void serve(HttpEndpoint.EventStream stream, Request request, Response response, Callback done,
      java.util.Set<EventSink> openSinks) {
    EventSink sink = new EventSink(response, done, request.getComponents().getScheduler());
    try {
      if (!request.getMethod().equals("GET")) {
        throw new HttpException(405, request.getMethod() + " " + request.getHttpURI().getDecodedPath()
            + " is not served (expected: GET)");
      }
      stream.open(HttpRequest.of(request, ""), sink);
    } catch (HttpException e) {
      sink.close();
      HttpEndpoint.respond(request, response, done, HttpResponse.text(e.status(), e.getMessage()));
      return;
    } catch (RuntimeException e) {
      log.warn("HTTP event stream {} failed to open", request.getHttpURI().getDecodedPath(), e);
      sink.close();
      HttpEndpoint.respond(request, response, done, HttpResponse.text(500, "internal error: " + e));
      return;
    }
    response.setStatus(200);
    response.getHeaders().put(org.eclipse.jetty.http.HttpHeader.CONTENT_TYPE, "text/event-stream;charset=UTF-8");
    response.getHeaders().put(org.eclipse.jetty.http.HttpHeader.CACHE_CONTROL, "no-cache");
    openSinks.add(sink);
    sink.onClose(() -> openSinks.remove(sink));
    sink.start();
  }

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
    return send(event, data, null);
  }

  /**
   * Queues one event, replacing the one of the same {@code key} that is still waiting to be
   * written, if any (it keeps its place): a client that is told "X changed" needs it once, however
   * often X changed meanwhile. False when the stream is closed.
   */
  public synchronized boolean send(String event, String data, @Nullable String key) {
    if (closed || closing) {
      return false;
    }
    if (key != null) {
      Queued waiting = latest.get(key); // only while it waits: taking it for writing removes it
      if (waiting != null) {
        waiting.bytes = encode(event, data);
        return true;
      }
    }
    if (queue.size() >= MAX_QUEUED) {
      fail(new IllegalStateException("the client fell " + MAX_QUEUED + " events behind"));
      return false;
    }
    if (key == null) {
      queue.add(encode(event, data));
    } else {
      Queued q = new Queued(key, encode(event, data));
      latest.put(key, q);
      queue.add(q);
    }
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

  /** An event that a later one of its key may replace until it is taken for writing. */
  private static final class Queued {
    final String key;
    ByteBuffer bytes;

    Queued(String key, ByteBuffer bytes) {
      this.key = key;
      this.bytes = bytes;
    }
  }

  private static ByteBuffer encode(String event, String data) {
    return ByteBuffer.wrap(("event: " + event + "\ndata: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
  }

  private void writeNext() { // holding this
    Object head = queue.poll();
    ByteBuffer next = null;
    if (head instanceof Queued q) {
      latest.remove(q.key, q);
      next = q.bytes;
    } else if (head instanceof ByteBuffer b) {
      next = b;
    }
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
    latest.clear();
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
