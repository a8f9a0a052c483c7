package io.roster.server.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.roster.server.time.Deadline;
import io.roster.server.tls.ServerTls;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An HTTP/1.1 listener on the JDK's built-in server ({@code com.sun.net.httpserver}), routing
 * each request to the handler of the longest matching path prefix (docs/decisions.md, record
 * 38); HTTPS on the JDK's {@code HttpsServer} when given the server's {@link ServerTls} (record
 * 64).
 *
 * <p>Bounded: requests run on {@link Limits#threads()} threads with a queue of {@link
 * Limits#queue()}; when both are full the listener's own thread runs the request, so accepting
 * slows down instead of queueing without bound. A body larger than {@link Limits#maxBodyBytes()}
 * is refused with 413 without being kept (up to 1 MiB of it is read and dropped, so that a
 * client still sending it gets the answer, not a reset). A request that takes longer than 5 s to arrive (the
 * JDK server reads it on a worker thread), or an answer longer than 30 s to leave, has its
 * connection closed (the JDK server's {@code maxReqTime} and {@code maxRspTime}, set here
 * unless the JVM was given them). A handler that throws harms only
 * its own request: {@link HttpException} becomes its status and message, anything else a 500.
 *
 * <p>Thread-safe after {@link #start()}; routes are added before it.
 */
public final class HttpEndpoint implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);
  /** How much of a too-large body is read and dropped so that its client gets the 413. */
  private static final long DRAIN_BYTES = 1 << 20;

  /** Answers one request; may throw {@link HttpException}. Runs on an HTTP worker thread. */
  @FunctionalInterface
  public interface Handler {
    HttpResponse handle(HttpRequest request);
  }

  /**
   * How much the listener takes on at once.
   *
   * @param threads requests handled in parallel
   * @param queue requests waiting for a thread, at most
   * @param maxBodyBytes largest request body read
   */
  public record Limits(int threads, int queue, int maxBodyBytes) {
    /** 8 threads, 256 waiting, 64 KiB bodies: far above what a naming request needs. */
    public static final Limits DEFAULT = new Limits(8, 256, 64 * 1024);
  }

  private final String host;
  private final int requestedPort;
  private final Limits limits;
  private final @Nullable ServerTls tls;
  private final Map<String, Handler> routes = new LinkedHashMap<>();
  private @Nullable HttpServer server;
  private @Nullable ThreadPoolExecutor executor;
  /** Requests being handled now; guarded by itself for the wait in {@link #stop}. */
  private final AtomicInteger active = new AtomicInteger();
  private volatile boolean stopping;

  /** A plaintext listener for {@code host:port} (0 = any free port); bound by {@link #start()}. */
  public HttpEndpoint(String host, int port, Limits limits) {
    this(host, port, limits, null);
  }

  /**
   * A listener for {@code host:port} (0 = any free port), HTTPS over {@code tls}'s material
   * (client certificates required when it is mutual), or plaintext when {@code tls} is null;
   * bound by {@link #start()}.
   */
  public HttpEndpoint(String host, int port, Limits limits, @Nullable ServerTls tls) {
    this.host = host;
    this.requestedPort = port;
    this.limits = limits;
    this.tls = tls;
  }

  /** Sends requests whose path is {@code prefix} or starts with {@code prefix + "/"} to {@code handler}. */
  public HttpEndpoint route(String prefix, Handler handler) {
    routes.put(prefix, handler);
    return this;
  }

  /** The threads of the handler pool, told apart from the listener's own thread ({@link #onWorker}). */
  private static final class Worker extends Thread {
    Worker(Runnable r, String name) {
      super(r, name);
    }
  }

  /**
   * Whether the current thread is one of the handler pool's, not the listener's own thread
   * (which runs a request itself when the pool and its queue are full): slow work (a password
   * check) may run only on the former.
   */
  public static boolean onWorker() {
    return Thread.currentThread() instanceof Worker;
  }

  /** Binds and starts serving. */
  public synchronized void start() throws IOException {
    // Read once by the JDK server's configuration. The JDK server reads a request's headers on
    // a worker thread: a client that sends them slowly holds one for at most 5 s.
    System.getProperties().putIfAbsent("sun.net.httpserver.maxReqTime", "5");
    System.getProperties().putIfAbsent("sun.net.httpserver.maxRspTime", "30");
    AtomicInteger n = new AtomicInteger();
    executor = new ThreadPoolExecutor(limits.threads(), limits.threads(), 30, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(limits.queue()), r -> {
          Thread t = new Worker(r, "roster-http-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        }, new ThreadPoolExecutor.CallerRunsPolicy());
    executor.allowCoreThreadTimeOut(true);
    server = tls == null ? HttpServer.create(new InetSocketAddress(host, requestedPort), 128) : https(tls);
    server.createContext("/", this::exchange);
    server.setExecutor(executor);
    server.start();
  }

  /** An HTTPS server: every connection's handshake on the material {@code tls} holds at that moment. */
  private HttpsServer https(ServerTls tls) throws IOException {
    HttpsServer https = HttpsServer.create(new InetSocketAddress(host, requestedPort), 128);
    https.setHttpsConfigurator(new HttpsConfigurator(tls.sslContext()) {
      @Override
      public void configure(HttpsParameters parameters) {
        parameters.setSSLParameters(tls.sslParameters());
      }
    });
    return https;
  }

  /** Whether this listener speaks HTTPS. */
  public boolean secure() {
    return tls != null;
  }

  /** The bound port. */
  public synchronized int port() {
    return Objects.requireNonNull(server, "not started").getAddress().getPort();
  }

  /**
   * Answers new requests 503, lets requests in progress finish for up to {@code grace}, then
   * stops listening and stops its threads. Idempotent.
   */
  public synchronized void stop(Duration grace) {
    if (server == null || executor == null) {
      return;
    }
    // New requests get 503 from now on; the JDK 17 server's own stop(delay) would wait the
    // whole delay even when idle, so the wait for requests in progress is ours.
    stopping = true;
    Deadline deadline = Deadline.after(grace);
    synchronized (active) {
      try {
        while (active.get() > 0 && !deadline.passed()) {
          active.wait(Math.max(1, deadline.remaining().toMillis()));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    server.stop(0);
    executor.shutdownNow();
    server = null;
  }

  @Override
  public void close() {
    stop(Duration.ZERO);
  }

  private void exchange(HttpExchange ex) {
    active.incrementAndGet();
    try {
      answer(ex);
    } finally {
      if (active.decrementAndGet() == 0) {
        synchronized (active) {
          active.notifyAll();
        }
      }
    }
  }

  private void answer(HttpExchange ex) {
    HttpResponse response;
    try {
      if (stopping) {
        throw new HttpException(503, "the server is stopping; try another server");
      }
      response = handle(ex);
    } catch (HttpException e) {
      response = HttpResponse.text(e.status(), e.getMessage());
    } catch (RuntimeException e) {
      log.warn("HTTP {} {} failed", ex.getRequestMethod(), ex.getRequestURI().getRawPath(), e);
      response = HttpResponse.text(500, "internal error: " + e);
    }
    try (ex) {
      byte[] body = response.body().getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", response.contentType());
      boolean head = ex.getRequestMethod().equalsIgnoreCase("HEAD");
      ex.sendResponseHeaders(response.status(), head || body.length == 0 ? -1 : body.length);
      if (!head && body.length > 0) {
        try (OutputStream out = ex.getResponseBody()) {
          out.write(body);
        }
      }
    } catch (IOException e) {
      log.debug("HTTP answer not delivered: {}", e.toString());
    }
  }

  private HttpResponse handle(HttpExchange ex) {
    String path = ex.getRequestURI().getPath();
    Handler handler = handlerFor(path);
    if (handler == null) {
      throw new HttpException(404, "no such path: " + path);
    }
    Map<String, String> params = new LinkedHashMap<>();
    HttpRequest.parseForm(ex.getRequestURI().getRawQuery(), params);
    String type = ex.getRequestHeaders().getFirst("Content-Type");
    String body = readBody(ex);
    if (!body.isEmpty()) {
      if (type == null || type.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded")) {
        HttpRequest.parseForm(body.strip(), params);
      }
    }
    String remote = ex.getRemoteAddress() == null ? "" : ex.getRemoteAddress().getAddress().getHostAddress();
    return handler.handle(new HttpRequest(ex.getRequestMethod().toUpperCase(Locale.ROOT), path, params, remote,
        ex.getRequestHeaders().getFirst("Authorization")));
  }

  private @Nullable Handler handlerFor(String path) {
    Handler best = null;
    int bestLength = -1;
    for (Map.Entry<String, Handler> e : routes.entrySet()) {
      String prefix = e.getKey();
      if ((path.equals(prefix) || path.startsWith(prefix + "/")) && prefix.length() > bestLength) {
        best = e.getValue();
        bestLength = prefix.length();
      }
    }
    return best;
  }

  /** The body as text, at most {@link Limits#maxBodyBytes()}; 413 beyond. */
  private String readBody(HttpExchange ex) {
    String length = ex.getRequestHeaders().getFirst("Content-Length");
    long declared;
    try {
      declared = length == null ? -1 : Long.parseLong(length.trim());
    } catch (NumberFormatException e) {
      throw new HttpException(400, "Content-Length: \"" + length + "\" (expected: a number of bytes)");
    }
    try (InputStream in = ex.getRequestBody()) {
      if (declared > limits.maxBodyBytes()) {
        throw tooLarge(in);
      }
      byte[] bytes = in.readNBytes(limits.maxBodyBytes() + 1);
      if (bytes.length > limits.maxBodyBytes()) {
        throw tooLarge(in);
      }
      return new String(bytes, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new HttpException(400, "request body not readable: " + e.getMessage());
    }
  }

  /**
   * A 413, after reading and dropping what the client still sends, up to {@link #DRAIN_BYTES}:
   * a client that writes its whole body before it reads the answer would otherwise see the
   * connection reset instead of the 413. Beyond that the connection is simply closed.
   */
  private HttpException tooLarge(InputStream in) throws IOException {
    byte[] sink = new byte[8192];
    long drained = 0;
    for (int n; drained <= DRAIN_BYTES && (n = in.read(sink)) >= 0; ) {
      drained += n;
    }
    return new HttpException(413, "request body larger than " + limits.maxBodyBytes() + " bytes (the limit)");
  }
}
