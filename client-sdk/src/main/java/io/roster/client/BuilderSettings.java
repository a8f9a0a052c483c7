package io.roster.client;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The settings of a {@link RosterClient.Builder}, its one subclass: each setting's default, and
 * what its setter takes, checks and keeps. The setters are the builder's public API, documented
 * here and inherited by it; {@link RosterClient.Builder#build()} reads the fields. Not
 * thread-safe.
 */
abstract sealed class BuilderSettings permits RosterClient.Builder {
  @Nullable String serverAddresses;
  boolean randomStart = true;
  String namespace = RosterClient.DEFAULT_NAMESPACE;
  String clientId = UUID.randomUUID().toString();
  String clientName = "roster-java";
  Map<String, String> labels = Map.of();
  Duration requestTimeout = Duration.ofSeconds(3);
  @Nullable Duration connectTimeout;
  Duration pollInterval = Duration.ofSeconds(10);
  Duration pollMaxBackoff = Duration.ofSeconds(60);
  boolean pollEnabled = true;
  Duration reconnectInitial = Duration.ofMillis(100);
  Duration reconnectMax = Duration.ofSeconds(3);
  Duration keepAliveTime = Duration.ofSeconds(5);
  Duration keepAliveTimeout = Duration.ofSeconds(5);
  Duration drainTimeout = Duration.ofSeconds(3);
  Duration reconnectEmptyHold = Duration.ofSeconds(4);
  boolean pushEmptyProtection;
  @Nullable Path failoverDir;
  @Nullable Executor listenerExecutor;
  @Nullable ScheduledExecutorService scheduler;
  @Nullable Path tlsTrust;
  @Nullable Path tlsCertificate;
  @Nullable Path tlsKey;
  Supplier<String> token = () -> "";

  /** The settings made so far: each may be made once. */
  private final Set<String> made = new HashSet<>();

  BuilderSettings() {}

  /**
   * Records that {@code setting} is made, or refuses a second time (two calls are a mistake: the
   * second would hide the first). Called once the new value has been checked, so that a refused
   * value does not count.
   */
  private void once(String setting, @Nullable Object current) {
    if (!made.add(setting)) {
      throw new IllegalStateException(setting + ": already set to " + current + " (a builder takes each setting once)");
    }
  }

  /**
   * Sets the servers to connect to, tried in turn and rotated through on failure; a client
   * starts at a random one of them (see {@link #randomStart}), so that the clients of one
   * list spread over a cluster's members. Required.
   *
   * @param addresses comma-separated {@code host:port} entries, e.g.
   *     {@code "10.0.0.1:9848,10.0.0.2:9848"}; IPv6 as {@code [::1]:9848}; the port defaults
   *     to 9848
   * @return this builder
   */
  public RosterClient.Builder serverAddresses(String addresses) {
    Objects.requireNonNull(addresses, "addresses");
    once("serverAddresses", serverAddresses);
    this.serverAddresses = addresses;
    return self();
  }

  /**
   * Whether the client starts at a random server of its list (the default) or at the first.
   * Either way it goes on through the list in order, wrapping around. Start at the first to
   * prefer one server (the nearest) and use the others only when it fails.
   *
   * @param value true to start at a random server (default), false to start at the first
   * @return this builder
   */
  public RosterClient.Builder randomStart(boolean value) {
    once("randomStart", randomStart);
    this.randomStart = value;
    return self();
  }

  /**
   * Sets the namespace (tenant) every call of this client works in. Default
   * {@value RosterClient#DEFAULT_NAMESPACE}.
   *
   * @param value the namespace
   * @return this builder
   */
  public RosterClient.Builder namespace(String value) {
    Objects.requireNonNull(value, "namespace");
    once("namespace", namespace);
    this.namespace = value;
    return self();
  }

  /**
   * Sets the client id sent in {@code hello}; stable for the life of the client, across
   * reconnects. Default: a random UUID.
   *
   * @param value the id, at most 128 characters
   * @return this builder
   */
  public RosterClient.Builder clientId(String value) {
    Objects.requireNonNull(value, "clientId");
    once("clientId", clientId);
    this.clientId = value;
    return self();
  }

  /**
   * Sets a free-form client name shown by the server's admin API. Default
   * {@code roster-java}.
   *
   * @param value the name
   * @return this builder
   */
  public RosterClient.Builder clientName(String value) {
    Objects.requireNonNull(value, "clientName");
    once("clientName", clientName);
    this.clientName = value;
    return self();
  }

  /**
   * Sets labels shown by the server's admin API, e.g. the application name. Default none.
   *
   * @param value the labels (copied)
   * @return this builder
   */
  public RosterClient.Builder labels(Map<String, String> value) {
    Map<String, String> copy = Map.copyOf(value);
    once("labels", labels);
    this.labels = copy;
    return self();
  }

  /**
   * Sets how long a blocking call waits: for a connection, then for the server's answer.
   * Also bounds how long {@link RosterClient#close()} waits for the server. Default 3 s.
   *
   * @param value a positive duration
   * @return this builder
   */
  public RosterClient.Builder requestTimeout(Duration value) {
    Objects.requireNonNull(value, "requestTimeout");
    once("requestTimeout", requestTimeout);
    this.requestTimeout = value;
    return self();
  }

  /**
   * Sets how long one connection attempt waits for a server: for its welcome, then for the
   * answers to the client's redo (its registrations and subscriptions). A server that does
   * not answer in time, such as a frozen cluster member whose kernel still accepts TCP, is
   * left for the next address. Default: the {@linkplain #requestTimeout(Duration) request
   * timeout} (3 s). With a cluster, keep it well below the members' {@code --member-grace}
   * (10 s): a client whose member died must find another one within that grace, and may
   * meet a frozen member first. A blocking call can still wait for longer, across
   * attempts, up to its request timeout.
   *
   * @param value a positive duration
   * @return this builder
   */
  public RosterClient.Builder connectTimeout(Duration value) {
    Objects.requireNonNull(value, "connectTimeout");
    once("connectTimeout", connectTimeout);
    this.connectTimeout = value;
    return self();
  }

  /**
   * Sets how long {@link RosterClient#close()} drains first: it waits up to this long for
   * every subscriber to confirm it no longer sees this client's instances (see
   * {@link RosterClient#drain(Duration)}). Zero closes without a drain (subscribers are still
   * pushed the removal, unconfirmed). Default 3 s; at most 60 s.
   *
   * @param value a duration from zero to 60 s
   * @return this builder
   */
  public RosterClient.Builder drainTimeout(Duration value) {
    Objects.requireNonNull(value, "drainTimeout");
    once("drainTimeout", drainTimeout);
    this.drainTimeout = value;
    return self();
  }

  /**
   * Sets how long, after a reconnect, a state that would empty a service this client knows
   * with instances is held back (also while reconnecting, when a poll brings such a state). When a standalone server restarts, a consumer may subscribe
   * again before its providers have registered again; without the hold it would see them all
   * vanish for that moment. A non-empty state arriving meanwhile replaces the held one; a
   * held push is acknowledged only once applied. A move that the server asked for and that
   * this client made before it let go of the old session (a cluster member's balance or
   * drain) is not a reconnect here: the new member's states are whole. Default 4 s (longer
   * than the largest reconnect back-off, 3 s, plus a margin); zero applies it at once; at
   * most 1 minute.
   *
   * @param value a duration from zero to one minute
   * @return this builder
   */
  public RosterClient.Builder reconnectEmptyHold(Duration value) {
    Objects.requireNonNull(value, "reconnectEmptyHold");
    once("reconnectEmptyHold", reconnectEmptyHold);
    this.reconnectEmptyHold = value;
    return self();
  }

  /**
   * Turns on push-empty protection: when a subscribed service that had instances would have
   * none (every provider gone at once, or a server that lost its state), the client keeps the
   * last non-empty list, tells listeners once with
   * {@link InstancesChangeEvent#emptyPushIgnored()}, and applies the next non-empty state as
   * usual. Calls to instances that are really gone then fail at the caller, which is the
   * trade-off: use it where an empty list is worse than a stale one. Default off.
   *
   * @param value true to protect
   * @return this builder
   */
  public RosterClient.Builder pushEmptyProtection(boolean value) {
    once("pushEmptyProtection", pushEmptyProtection);
    this.pushEmptyProtection = value;
    return self();
  }

  /**
   * Turns on the failover snapshot: the client writes the last known list of every
   * subscribed service to files in {@code dir} (one per service, replaced atomically), and
   * when no server answers — typically a client that starts while the registry is down —
   * {@code subscribe} and {@code getAllInstances} serve those lists until a server answers.
   * Default off (null).
   *
   * @param dir a writable directory; created when missing
   * @return this builder
   */
  public RosterClient.Builder failoverDir(Path dir) {
    once("failoverDir", failoverDir);
    this.failoverDir = dir;
    return self();
  }

  /**
   * Sets how often each subscribed service is polled as a fallback to pushes. Default 10 s.
   *
   * @param value a positive duration
   * @return this builder
   */
  public RosterClient.Builder pollInterval(Duration value) {
    Objects.requireNonNull(value, "pollInterval");
    once("pollInterval", pollInterval);
    this.pollInterval = value;
    return self();
  }

  /**
   * Sets the longest wait between polls of a service while polls fail (the wait doubles from
   * the poll interval). Default 60 s.
   *
   * @param value a duration &ge; the poll interval
   * @return this builder
   */
  public RosterClient.Builder pollMaxBackoff(Duration value) {
    Objects.requireNonNull(value, "pollMaxBackoff");
    once("pollMaxBackoff", pollMaxBackoff);
    this.pollMaxBackoff = value;
    return self();
  }

  /**
   * Turns the poll fallback on or off. Default on.
   *
   * @param value true to poll
   * @return this builder
   */
  public RosterClient.Builder pollEnabled(boolean value) {
    once("pollEnabled", pollEnabled);
    this.pollEnabled = value;
    return self();
  }

  /**
   * Sets the reconnect back-off: the wait before the n-th consecutive attempt is drawn
   * uniformly from {@code [0, min(max, initial * 2^n)]} ("full jitter"); it starts over after
   * a successful connection (one whose server took the client's registrations back). Default 100 ms .. 3 s: after an outage every client is back within
   * about 3 s of the server, which is what {@link #reconnectEmptyHold(Duration)} counts on.
   *
   * @param initial the first ceiling, positive
   * @param max the largest ceiling, &ge; initial
   * @return this builder
   */
  public RosterClient.Builder reconnectBackoff(Duration initial, Duration max) {
    Objects.requireNonNull(initial, "initial");
    Objects.requireNonNull(max, "max");
    once("reconnectBackoff", reconnectInitial + " .. " + reconnectMax);
    this.reconnectInitial = initial;
    this.reconnectMax = max;
    return self();
  }

  /**
   * Sets liveness checking of the connection. After {@code time} without a frame from the
   * server the client sends an application-level ping; without any frame within
   * {@code timeout} after that, it drops the connection and reconnects. The same values
   * configure HTTP/2 keepalive of the channel (which gRPC raises to at least 10 s). Default
   * 5 s / 5 s: a silent server is detected within about 10 s.
   *
   * @param time idle time before a ping, positive
   * @param timeout how long to wait for the answer, positive
   * @return this builder
   */
  public RosterClient.Builder keepAlive(Duration time, Duration timeout) {
    Objects.requireNonNull(time, "time");
    Objects.requireNonNull(timeout, "timeout");
    once("keepAlive", keepAliveTime + " / " + keepAliveTimeout);
    this.keepAliveTime = time;
    this.keepAliveTimeout = timeout;
    return self();
  }

  /**
   * Shares a scheduler between clients: the client runs its timers (keepalive, request
   * timeouts, polls, reconnects) and short background tasks on it instead of its own thread,
   * and does not shut it down. For processes with many clients (gateways, tests, load
   * generators). Its tasks are short and never block; one thread serves thousands of
   * clients. Default: one daemon thread per client, {@code roster-client-scheduler}.
   *
   * @param value the scheduler; for a {@code ScheduledThreadPoolExecutor}, turn on
   *     {@code setRemoveOnCancelPolicy(true)} so cancelled timers do not pile up
   * @return this builder
   */
  public RosterClient.Builder scheduler(ScheduledExecutorService value) {
    Objects.requireNonNull(value, "scheduler");
    once("scheduler", scheduler);
    this.scheduler = value;
    return self();
  }

  /**
   * Sets the executor {@link Listener}s run on. The client still runs the events of one
   * service one at a time and in order. The client does not shut it down. Default: a cached
   * pool of daemon threads named {@code roster-listener-N}, owned by the client.
   *
   * @param value the executor
   * @return this builder
   */
  public RosterClient.Builder listenerExecutor(Executor value) {
    Objects.requireNonNull(value, "listenerExecutor");
    once("listenerExecutor", listenerExecutor);
    this.listenerExecutor = value;
    return self();
  }

  /**
   * Connects over TLS, trusting a server whose certificate chains to one of the CA certificates
   * in {@code caPem}. The server's certificate must also name the host the client dials, as a
   * DNS name or an IP address among its subject alternative names: hostname verification is on,
   * and there is no setting that turns it off. The file is read when the client is built (a
   * server's rotated certificate from the same CA needs nothing here). Default: plaintext. A
   * server on TLS refuses plaintext clients, and a plaintext server refuses TLS clients.
   *
   * @param caPem a PEM file of one or more CA certificates ({@code -----BEGIN CERTIFICATE-----})
   * @return this builder
   */
  public RosterClient.Builder tlsTrust(Path caPem) {
    Objects.requireNonNull(caPem, "caPem");
    once("tlsTrust", tlsTrust);
    this.tlsTrust = caPem;
    return self();
  }

  /**
   * Presents this certificate when connecting: needed by a server started with
   * {@code --tls-client-ca} (mutual TLS), which accepts a certificate that chains to one of its
   * client CAs. Needs {@link #tlsTrust(Path)}. The files are read when the client is built.
   * Default: none.
   *
   * @param certificatePem a PEM file with the client's certificate first, then its intermediates
   * @param keyPem a PEM file with the certificate's unencrypted PKCS#8 private key
   *     ({@code -----BEGIN PRIVATE KEY-----})
   * @return this builder
   */
  public RosterClient.Builder tlsClientCertificate(Path certificatePem, Path keyPem) {
    Objects.requireNonNull(certificatePem, "certificatePem");
    Objects.requireNonNull(keyPem, "keyPem");
    once("tlsClientCertificate", tlsCertificate + " / " + tlsKey);
    this.tlsCertificate = certificatePem;
    this.tlsKey = keyPem;
    return self();
  }

  /**
   * Sets the credential the client presents, for a server that runs with an auth file: a static
   * token (as {@code java -jar roster-server.jar auth token} prints it) or an access token a
   * login issued. Sent in each session's hello and with every {@code Registry} call; the
   * server refuses what the token's grants do not allow with {@link RosterException.Code#PERMISSION_DENIED}.
   * A token the server does not accept (missing, unknown, expired, its identity removed) makes
   * every call that needs the connection throw {@link RosterException.Code#UNAUTHENTICATED} at
   * once, keeping what it asked (a registration is made once a server takes the credentials); the
   * client logs one WARN and tries again after 1 s, doubling up to 30 s, with the token of that
   * moment ({@link #tokenSupplier}). Default: none. Never logged.
   *
   * @param value the token
   * @return this builder
   */
  public RosterClient.Builder token(String value) {
    Objects.requireNonNull(value, "token");
    once("token", "(set)");
    this.token = () -> value;
    return self();
  }

  /**
   * Sets where the client gets its credential, for tokens that rotate: asked at each connect
   * and each {@code Registry} call, and every keepalive interval while a session is open; when
   * the answer changes, the open session is given the new token without reconnecting (it must
   * prove the same identity). Called on the client's scheduler: it must return quickly, never
   * block, and never return null. Default: no token.
   *
   * @param value the supplier
   * @return this builder
   */
  public RosterClient.Builder tokenSupplier(Supplier<String> value) {
    Objects.requireNonNull(value, "tokenSupplier");
    once("token", "(set)");
    this.token = value;
    return self();
  }

  private RosterClient.Builder self() {
    return (RosterClient.Builder) this;
  }
}
