package io.roster.server.http;

import io.roster.server.time.Deadline;
import io.roster.server.tls.ServerTls;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.SizeLimitHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP/1.1 listener, on Jetty's core handlers (decision 67), routing each request to the
 * handler of the longest matching path prefix (decision 38); HTTPS when given the server's
 * {@link ServerTls} (decision 64).
 *
 * <p>Bounded, and not held up by slow clients. Jetty reads requests without a thread until one
 * has arrived, and this endpoint reads a body asynchronously before it calls a handler, so a
 * client that trickles its headers or body holds a connection, never a thread; {@link
 * SlowRequests} closes a connection whose request has not fully arrived {@link
 * Limits#requestTimeout()} after its first byte, and Jetty closes one that sends or reads nothing for
 * {@link #IDLE_TIMEOUT}. Handlers run on at most {@link Limits#threads()} threads, and one that
 * answers later ({@link #routeAsync}: a login waiting for its password check) holds none while it
 * waits; at most {@link
 * Limits#connections()} connections are open at once (beyond, accepting waits). A body larger than {@link Limits#maxBodyBytes()} is refused with 413 (Jetty's
 * {@code SizeLimitHandler}). A handler that throws harms only its own request: {@link
 * HttpException} becomes its status and message, anything else a 500.
 *
 * <p>Thread-safe after {@link #start()}; routes are added before it.
 */
public final class HttpEndpoint implements AutoCloseable {

  /**
   * The console's content security policy, sent with every answer: its own files only (no inline
   * script or style, no other origin), fetches to this origin, never framed (decision 82).
   */
  static final String CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; "
      + "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
      + "frame-ancestors 'none'";

  /**
   * Headers every answer carries, whatever the route, its status, or who wrote it (a handler, a
   * redirect, an event stream, Jetty's own error page): no content sniffing, no referrer, the
   * console's policy, no framing.
   */
  static final List<HttpField> SECURITY_HEADERS = List.of(
      new HttpField("X-Content-Type-Options", "nosniff"),
      new HttpField("Referrer-Policy", "no-referrer"),
      new HttpField("Content-Security-Policy", CONTENT_SECURITY_POLICY),
      new HttpField("X-Frame-Options", "DENY"));

  /**
   * The route a request under no route is told to {@link Answered} with: one name for every such
   * path, so that no path a client makes up is counted under a name of its own.
   */
  public static final String UNKNOWN_ROUTE = "unknown";

  /** A connection that sends and reads nothing for this long is closed. */
  static final Duration IDLE_TIMEOUT = Duration.ofSeconds(30);

  private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);
  /** Jetty's own threads beside the handlers': one acceptor and one selector. */
  private static final int JETTY_THREADS = 2;

  /** Answers one request; may throw {@link HttpException}. Runs on an HTTP worker thread. */
  @FunctionalInterface
  public interface Handler {
    HttpResponse handle(HttpRequest request);
  }

  /**
   * Answers one request later: the worker thread is free once it returns, and the answer is
   * written when the future completes (on whichever thread completes it). May throw {@link
   * HttpException}, or complete the future with one. Runs on an HTTP worker thread; must not block.
   */
  @FunctionalInterface
  public interface AsyncHandler {
    CompletableFuture<HttpResponse> handle(HttpRequest request);
  }

  /**
   * How much the listener takes on at once.
   *
   * @param threads requests handled in parallel
   * @param connections connections open at once, at most: beyond it the listener stops accepting
   *     until one closes (each connection has at most one task waiting for a thread)
   * @param maxBodyBytes largest request body read
   * @param requestTimeout how long a request may take to arrive, headers and body, from its first
   *     byte ({@code --http-request-timeout})
   */
  public record Limits(int threads, int connections, int maxBodyBytes, Duration requestTimeout) {
    /** 8 threads, 4,096 connections, 64 KiB bodies, 10 s: far above what naming requests need. */
    public static final Limits DEFAULT = new Limits(8, 4096, 64 * 1024, Duration.ofSeconds(10));

    /** The same with another {@link #requestTimeout}. */
    public Limits withRequestTimeout(Duration timeout) {
      return new Limits(threads, connections, maxBodyBytes, timeout);
    }
  }

  private final String host;
  private final int requestedPort;
  private final Limits limits;
  private final @Nullable ServerTls tls;
  private final Map<String, AsyncHandler> routes = new LinkedHashMap<>();
  private final Map<String, EventStream> streams = new LinkedHashMap<>();
  private final Map<String, String> redirects = new LinkedHashMap<>();
  private final java.util.Set<EventSink> openSinks = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private @Nullable Server server;
  private @Nullable ServerConnector connector;
  /** Requests being handled now; guarded by itself for the wait in {@link #stop}. */
  private final AtomicInteger active = new AtomicInteger();
  private volatile boolean stopping;
  private final HttpRefusals refusals = new HttpRefusals();
  private volatile Answered answered = (route, path, status, refusal, nanos) -> { };

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

  /**
   * A route whose answer is a stream of server-sent events: {@link #open} checks the request
   * (throwing {@link HttpException} refuses it with that status, before anything is streamed)
   * and keeps the sink to send on; it runs on an HTTP worker thread and must not block.
   */
  @FunctionalInterface
  public interface EventStream {
    void open(HttpRequest request, EventSink sink);
  }

  /** Streams events to {@code GET} requests whose path is exactly {@code path}. */
  public HttpEndpoint events(String path, EventStream stream) {
    streams.put(path, stream);
    return this;
  }

  /**
   * Serves {@code names}, files under {@code classpathDir} in the server's jar, at {@code
   * contextPath} ({@code index.html} for the directory itself), read once here and held in
   * memory. Not Jetty's {@code ResourceHandler}: serving from the jar makes Jetty mount the whole
   * shaded jar as a file system, whose index of every entry stays on the heap (decision 68).
   *
   * @throws IllegalArgumentException when a file is not on the class path
   */
  public HttpEndpoint staticFiles(String contextPath, String classpathDir, List<String> names) {
    for (String name : names) {
      HttpResponse file = HttpResponse.classpathFile(classpathDir, name);
      route(contextPath + "/" + name, r -> file);
      if (name.equals("index.html")) {
        route(contextPath + "/", r -> file);
      }
    }
    redirect(contextPath, contextPath + "/");
    return this;
  }

  /** Answers {@code GET path} with a redirect (302) to {@code location}. */
  public HttpEndpoint redirect(String path, String location) {
    redirects.put(path, location);
    return this;
  }

  /** Sends requests whose path is {@code prefix} or starts with {@code prefix + "/"} to {@code handler}. */
  public HttpEndpoint onAnswered(Answered listener) {
    this.answered = Objects.requireNonNull(listener);
    return this;
  }

  public HttpEndpoint route(String prefix, Handler handler) {
    routes.put(prefix, r -> CompletableFuture.completedFuture(handler.handle(r)));
    return this;
  }

  /** As {@link #route}, for a handler that answers later (without holding the worker thread while it waits). */
  public HttpEndpoint routeAsync(String prefix, AsyncHandler handler) {
    routes.put(prefix, handler);
    return this;
  }

  /** Binds and starts serving. */
  public synchronized void start() throws IOException {
    // Jetty's task queue is not given a bound (Jetty needs room for its own tasks): what waits in
    // it is at most one task per connection, and connections are bounded below.
    QueuedThreadPool threads = new QueuedThreadPool(limits.threads() + JETTY_THREADS, 1,
        (int) Duration.ofSeconds(30).toMillis());
    threads.setName("roster-http");
    threads.setDaemon(true);
    threads.setReservedThreads(0);
    Server s = new Server(threads);
    HttpConfiguration config = new HttpConfiguration();
    config.setSendServerVersion(false);
    config.setSendXPoweredBy(false);
    HttpConnectionFactory http = new HttpConnectionFactory(config);
    ServerConnector c = tls == null ? new ServerConnector(s, 1, 1, http)
        : new ServerConnector(s, 1, 1, new SslConnectionFactory(JettyTls.contextFactory(tls), http.getProtocol()), http);
    c.setHost(host);
    c.setPort(requestedPort);
    c.setIdleTimeout(IDLE_TIMEOUT.toMillis());
    c.setAcceptQueueSize(128);
    c.addBean(new SlowRequests(s.getScheduler(), limits.requestTimeout(), refusals));
    s.addConnector(c);
    s.addBean(new NetworkConnectionLimit(limits.connections(), c));
    // A declared Content-Length over the limit is answered by Dispatch, naming the limit; this
    // catches a chunked body that grows past it while it is read.
    SizeLimitHandler sizeLimit = new SizeLimitHandler(limits.maxBodyBytes(), -1);
    sizeLimit.setHandler(new Dispatch());
    s.setHandler(sizeLimit);
    s.setErrorHandler(new JsonErrors(refusals));
    try {
      s.start();
    } catch (IOException e) {
      stopQuietly(s);
      throw e;
    } catch (Exception e) {
      stopQuietly(s);
      throw new IOException(e.getMessage(), e);
    }
    server = s;
    connector = c;
  }

  private static void stopQuietly(Server s) {
    try {
      s.stop();
    } catch (Exception e) {
      log.debug("Stopping an HTTP port that did not start: {}", e.toString());
    }
  }

  /** What this listener refused before any route saw it, by reason. */
  public HttpRefusals refusals() {
    return refusals;
  }

  /** Connections open now. */
  public int openConnections() {
    ServerConnector c = connector;
    return c == null ? 0 : c.getConnectedEndPoints().size();
  }

  /** Whether this listener speaks HTTPS. */
  public boolean secure() {
    return tls != null;
  }

  /** The bound port. */
  public synchronized int port() {
    return Objects.requireNonNull(connector, "not started").getLocalPort();
  }

  /**
   * Answers new requests 503, lets requests in progress finish for up to {@code grace}, then
   * stops listening and stops its threads. Idempotent.
   */
  public synchronized void stop(Duration grace) {
    if (server == null) {
      return;
    }
    stopping = true;
    // Event streams never end by themselves: end them, so that the wait is for requests only.
    openSinks.forEach(EventSink::close);
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
    try {
      server.stop();
    } catch (Exception e) {
      log.warn("The HTTP port did not stop cleanly", e);
    }
    server = null;
  }

  @Override
  public void close() {
    stop(Duration.ZERO);
  }

  /** Reads a request's body without a thread, then runs its route's handler and writes the answer. */
  private final class Dispatch extends org.eclipse.jetty.server.Handler.Abstract {
    @Override
    public boolean handle(Request request, Response response, Callback callback) {
      secure(response.getHeaders());
      active.incrementAndGet();
      Callback done = Callback.from(callback, HttpEndpoint.this::finished);
      String path = request.getHttpURI().getDecodedPath();
      String location = redirects.get(path);
      if (location != null && request.getMethod().equals("GET")) {
        Response.sendRedirect(request, response, done, location);
        return true;
      }
      EventStream stream = streams.get(path);
      if (stream != null && !stopping) {
        EventSink.serve(stream, request, response, done, openSinks);
        return true;
      }
      String route = routeFor(path);
      AsyncHandler handler = route == null ? null : routes.get(route);
      HttpResponse refusal = stopping ? HttpResponse.text(503, "the server is stopping; try another server")
          : handler == null ? HttpResponse.text(404, "no such path: " + path)
          : request.getLength() > limits.maxBodyBytes() ? tooLarge()
          : null;
      if (refusal != null || handler == null) {
        HttpResponse r = Objects.requireNonNull(refusal);
        if (r.status() == 413) {
          refusals.count(HttpRefusals.Reason.TOO_LARGE);
        } else {
          answered.answered(route == null ? UNKNOWN_ROUTE : route, path, r.status(), null, took(request));
        }
        respond(request, response, done, r);
        return true;
      }
      Content.Source.asString(request, StandardCharsets.UTF_8, new Promise<String>() {
        @Override
        public void succeeded(String body) {
          answer(Objects.requireNonNull(route), handler, request, body).whenComplete((answer, failure) ->
              respond(request, response, done, answer != null ? answer : HttpResponse.text(500, "internal error: " + failure)));
        }

        @Override
        public void failed(Throwable failure) {
          HttpResponse r = failure instanceof org.eclipse.jetty.http.HttpException.RuntimeException h
              && h.getCode() == 413 ? tooLarge() : HttpResponse.text(400, "request body not readable: " + failure.getMessage());
          refusals.count(HttpRefusals.Reason.of(r.status()));
          respond(request, response, done, r);
        }
      });
      return true;
    }
  }

  /** Puts {@link #SECURITY_HEADERS} on an answer. */
  static void secure(HttpFields.Mutable headers) {
    SECURITY_HEADERS.forEach(headers::put);
  }

  private HttpResponse tooLarge() {
    return HttpResponse.text(413, "request body larger than " + limits.maxBodyBytes() + " bytes (the limit)");
  }

  private void finished() {
    if (active.decrementAndGet() == 0) {
      synchronized (active) {
        active.notifyAll();
      }
    }
  }

  /** The handler's answer (never a failed future: a failure is its answer, as {@link #answer(String, Request, Throwable)} says). */
  private CompletableFuture<HttpResponse> answer(String route, AsyncHandler handler, Request request, String body) {
    CompletableFuture<HttpResponse> pending;
    try {
      pending = handler.handle(HttpRequest.of(request, body));
    } catch (RuntimeException e) {
      pending = CompletableFuture.failedFuture(e);
    }
    return pending.handle((answer, failure) -> {
      String path = request.getHttpURI().getDecodedPath();
      HttpResponse a = failure == null ? Objects.requireNonNull(answer) : answer(path, request, failure);
      answered.answered(route, path, a.status(),
          unwrap(failure) instanceof HttpException e ? e.refusal() : null, took(request));
      return a;
    });
  }

  /** The answer to a handler's failure: its status for an {@link HttpException}, else a 500. */
  private static HttpResponse answer(String path, Request request, Throwable failure) {
    Throwable f = unwrap(failure);
    if (f instanceof HttpException e) {
      return HttpResponse.text(e.status(), e.getMessage());
    }
    log.warn("HTTP {} {} failed", request.getMethod(), path, f);
    return HttpResponse.text(500, "internal error: " + f);
  }

  private static @Nullable Throwable unwrap(@Nullable Throwable t) {
    return t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  static void respond(Request request, Response response, Callback done, HttpResponse answer) {
    byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
    response.setStatus(answer.status());
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, answer.contentType());
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
    answer.headers().forEach((name, value) -> response.getHeaders().put(name, value));
    boolean head = request.getMethod().equalsIgnoreCase("HEAD");
    response.write(true, head || body.length == 0 ? null : ByteBuffer.wrap(body), done);
  }

  /** Nanoseconds since {@code request}'s first byte arrived, on Jetty's clock. */
  private static long took(Request request) {
    return org.eclipse.jetty.util.NanoTime.since(request.getBeginNanoTime());
  }

  /** The longest route prefix {@code path} falls under, or null. */
  private @Nullable String routeFor(String path) {
    String best = null;
    for (String prefix : routes.keySet()) {
      if ((path.equals(prefix) || path.startsWith(prefix + "/")) && (best == null || prefix.length() > best.length())) {
        best = prefix;
      }
    }
    return best;
  }
}
