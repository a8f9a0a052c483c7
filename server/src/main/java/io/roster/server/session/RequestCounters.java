package io.roster.server.session;

import io.grpc.StatusRuntimeException;
import io.roster.server.model.RegistryException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The requests every port handled, by protocol, type and result; the refusals among them by the
 * limit that refused; and drains, for the server's metrics.
 *
 * <p>Every key is one of a fixed set the code names: a request's type is a constant of its
 * protocol (a Nacos request of a type Roster does not know counts as {@code other}), its result
 * the status it was answered with, a limit one of the {@code --max-...} flags. So the number of
 * counters does not grow with services, clients or addresses.
 *
 * <p>Thread-safe; counting is a map lookup and a {@link LongAdder} increment.
 */
@SuppressWarnings("EnumOrdinal") // a protocol's index into the counters built here, never stored or sent
public final class RequestCounters {

  /** Where a request came in. */
  public enum Protocol {
    /** Roster's {@code Session/Connect} stream and its unary services. */
    ROSTER("roster"),
    /** A Nacos 2.x or 3.x client's gRPC connection. */
    NACOS_GRPC("nacos-grpc"),
    /** Nacos's v1/v2/v3 HTTP API. */
    NACOS_HTTP("nacos-http"),
    /** Roster's own HTTP routes: admin API, console, metrics, service discovery. */
    HTTP("http"),
    /** The DNS port ({@code --dns-port}). */
    DNS("dns");

    private final String label;

    Protocol(String label) {
      this.label = label;
    }

    /** The value of the {@code protocol} label. */
    public String label() {
      return label;
    }
  }

  /** The result of a request that succeeded. */
  public static final String OK = "ok";

  /** Per protocol (by ordinal), type and result: nested lookups, so counting allocates nothing once a key exists. */
  private final List<Map<String, Map<String, LongAdder>>> requests = new java.util.ArrayList<>();
  private final Map<String, LongAdder> refusals = new ConcurrentHashMap<>();
  private final LongAdder drainsStarted = new LongAdder();
  private final LongAdder drainsConfirmed = new LongAdder();
  private final LongAdder drainsTimedOut = new LongAdder();

  /**
   * The limits that refuse requests, by flag: counted from zero before their first refusal, so
   * that a rate over them exists from the start.
   */
  public static final List<String> LIMITS = List.of("max-sessions-per-connection", "max-sessions-per-address",
      "max-subscriptions-per-connection", "max-watches-per-connection", "max-instances-per-connection",
      "max-instances-per-address", "max-instances-per-service", "max-service-bytes", "max-service-settings-bytes");

  /** Told the duration of each request counted with its start; set once, by the server's metrics. */
  public interface Durations {
    /** One request of {@code type} took {@code nanos}. Runs on the request's thread; must not block. */
    void took(Protocol protocol, String type, long nanos);
  }

  private final java.util.function.LongSupplier nanoTime;
  private volatile Durations durations = (protocol, type, nanos) -> { };

  /** Counters on the system's monotonic clock (tests, and parts built without a server's clock). */
  public RequestCounters() {
    this(io.roster.server.time.SystemScheduler::systemNanoTime);
  }

  /** Counters whose requests' durations are read on {@code nanoTime} (monotonic nanoseconds). */
  public RequestCounters(java.util.function.LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
    for (int i = 0; i < Protocol.values().length; i++) {
      requests.add(new ConcurrentHashMap<>());
    }
    for (String limit : LIMITS) {
      refusals.put(limit, new LongAdder());
    }
  }

  /** Counts one request of {@code type} that ended with {@code failure} (null: it succeeded). */
  public void count(Protocol protocol, String type, @Nullable Throwable failure) {
    count(protocol, type, failure == null ? OK : result(failure), failure);
  }

  /**
   * Counts one request of {@code type} answered with {@code result}; {@code failure}, when a
   * limit refused it, also counts as a refusal by that limit.
   */
  public void count(Protocol protocol, String type, String result, @Nullable Throwable failure) {
    count(protocol, type, result);
    if (failure != null && unwrap(failure) instanceof RegistryException re && !re.limit().isEmpty()) {
      refused(re.limit());
    }
  }

  /** Where each request's duration goes ({@code roster_request_duration_seconds}). */
  public void onDuration(Durations sink) {
    this.durations = java.util.Objects.requireNonNull(sink);
  }

  /** Now, on this counters' clock: a request's start, for the {@code count} and {@code track} that take one. */
  public long start() {
    return nanoTime.getAsLong();
  }

  /** As {@link #count(Protocol, String, Throwable)}, and the request's duration since {@code startNanos}. */
  public void count(Protocol protocol, String type, @Nullable Throwable failure, long startNanos) {
    count(protocol, type, failure);
    took(protocol, type, nanoTime.getAsLong() - startNanos);
  }

  /** As {@link #count(Protocol, String, String)}, and the request's duration since {@code startNanos}. */
  public void count(Protocol protocol, String type, String result, long startNanos) {
    count(protocol, type, result);
    took(protocol, type, nanoTime.getAsLong() - startNanos);
  }

  /** A request counted apart took {@code nanos}: one observation of its duration. */
  public void took(Protocol protocol, String type, long nanos) {
    durations.took(protocol, type, Math.max(0, nanos));
  }

  /** Counts a refusal by the limit of flag {@code limit} (its request is counted elsewhere). */
  public void refused(String limit) {
    refusals.computeIfAbsent(limit, k -> new LongAdder()).increment();
  }

  /** Counts one request of {@code type} answered with {@code result} (a constant: {@link #OK}, a status name). */
  public void count(Protocol protocol, String type, String result) {
    requests.get(protocol.ordinal()).computeIfAbsent(type, k -> new ConcurrentHashMap<>())
        .computeIfAbsent(result, k -> new LongAdder()).increment();
  }

  /** Counts {@code request} once it completes (now, if it has), with its duration since {@code startNanos}; returns it. */
  public <T> CompletableFuture<T> track(Protocol protocol, String type, CompletableFuture<T> request, long startNanos) {
    if (!request.isDone()) {
      request.whenComplete((done, failed) -> count(protocol, type, failed, startNanos));
    } else if (!request.isCompletedExceptionally()) {
      count(protocol, type, OK, startNanos); // the usual case, standalone: applied already, nothing to allocate
    } else {
      try {
        request.getNow(null);
      } catch (CompletionException | java.util.concurrent.CancellationException e) {
        count(protocol, type, e, startNanos);
      }
    }
    return request;
  }

  /** A drain began: its instances are out of traffic and their subscribers are being told. */
  public void drainStarted() {
    drainsStarted.increment();
  }

  /** A drain ended: {@code confirmed} when every subscriber acked, else some never did in time. */
  public void drainEnded(boolean confirmed) {
    (confirmed ? drainsConfirmed : drainsTimedOut).increment();
  }

  /** Each (protocol, type, result) counted so far, with its count. */
  public void forEachRequest(RequestVisitor visitor) {
    for (Protocol protocol : Protocol.values()) {
      requests.get(protocol.ordinal()).forEach((type, results) -> results.forEach(
          (result, n) -> visitor.visit(protocol, type, result, n.sum())));
    }
  }

  /** Each limit that refused so far ({@code max-instances-per-connection}, ...), with its count. */
  public void forEachRefusal(BiConsumer<String, Long> visitor) {
    refusals.forEach((limit, n) -> visitor.accept(limit, n.sum()));
  }

  public long drainsStarted() {
    return drainsStarted.sum();
  }

  public long drainsConfirmed() {
    return drainsConfirmed.sum();
  }

  public long drainsTimedOut() {
    return drainsTimedOut.sum();
  }

  /** Receives one request counter. */
  @FunctionalInterface
  public interface RequestVisitor {
    void visit(Protocol protocol, String type, String result, long count);
  }

  /**
   * The result label of a failure: its registry error kind or gRPC status code in lower case
   * ({@code invalid_argument}, {@code resource_exhausted}, ...), {@code internal} for anything else.
   */
  public static String result(Throwable failure) {
    Throwable t = unwrap(failure);
    if (t instanceof RegistryException re) {
      return re.kind().name().toLowerCase(Locale.ROOT);
    }
    if (t instanceof StatusRuntimeException s) {
      return s.getStatus().getCode().name().toLowerCase(Locale.ROOT);
    }
    if (t instanceof IllegalArgumentException) {
      return "invalid_argument";
    }
    return "internal";
  }

  private static Throwable unwrap(Throwable t) {
    Throwable cause = t;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }
}
