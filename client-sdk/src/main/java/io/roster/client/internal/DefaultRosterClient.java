package io.roster.client.internal;

import io.roster.client.ClientClosedException;
import io.roster.client.DrainResult;
import io.roster.client.Instance;
import io.roster.client.Listener;
import io.roster.client.RosterClient;
import io.roster.client.RosterException;
import io.roster.client.RosterException.Code;
import io.roster.client.ServicePage;
import io.roster.client.internal.InstancesDiff.Identity;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client: checks the arguments of the API and delegates to its parts, which it creates,
 * wires and closes:
 * <ul>
 *   <li>{@link DesiredState}: what this client registered, reconciled onto whatever session the
 *       {@link ConnectionManager} holds, redone on every welcome, forgotten by a drain;
 *   <li>{@link SubscriptionCache}: the subscribed services, fed by pushes and the
 *       {@link Poller}, with the hold, push-empty protection, failover and ack rules;
 *   <li>{@link Queries}: one-off reads from the cache, the session or {@code Registry} calls
 *       with fail-over.
 * </ul>
 *
 * <p>Threading: no lock. The connection state ({@link ConnectionManager}), the desired
 * registrations ({@link DesiredState}), the subscriptions ({@link SubscriptionCache}) and the
 * poll schedule ({@link Poller}) change only in one {@link SerialContext} created here, whose
 * tasks run one at a time. The parts share it because these need atomicity across parts: every
 * change of desired state and the frame that applies it are one task, so frames reach the
 * server in the order of the changes; the redo ({@link #onWelcome}: the hold's reconnect mark,
 * then every registration and subscription) is one task of the connection manager, so it never
 * interleaves with a change; and {@link #unsubscribe(String, String, Listener)} is one task
 * across the cache and the unsubscribe frame. Blocking waits and listener calls happen outside
 * it. The callbacks of {@link ConnectionManager.Handler} run in the context and never block.
 *
 * <p>Created by {@link ClientFactory} for the builder in {@code io.roster.client}.
 */
final class DefaultRosterClient implements RosterClient, ConnectionManager.Handler {

  private static final Logger log = LoggerFactory.getLogger(DefaultRosterClient.class);

  private static final String VERSION = Objects.requireNonNullElse(
      DefaultRosterClient.class.getPackage().getImplementationVersion(), "dev");

  /** The longest {@link #create} waits for the first connection. */
  private static final Duration BUILD_WAIT = Duration.ofSeconds(1);

  private final ClientOptions options;
  private final String namespace;
  private final Duration requestTimeout;
  private final Duration drainTimeout;
  private final @Nullable ExecutorService failoverWriter;
  private final Connector connector;
  private final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  private final @Nullable ExecutorService ownedListenerExecutor;
  private final SerialContext context = new SerialContext();
  private final ConnectionManager connection;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicLong requestIds = new AtomicLong();
  // The parts; each documents its own state and threading.
  private final SubscriptionCache cache;
  private final DesiredState desired;
  private final Queries queries;

  /**
   * Builds a client with real threads and gRPC, starts connecting and waits briefly (at most
   * one second, or the request timeout when shorter) for the first connection.
   *
   * @param options the validated settings
   * @return the started client
   */
  static RosterClient create(ClientOptions options) {
    List<ServerAddress> addresses = ServerAddress.parseList(options.serverAddresses());
    ScheduledExecutorService scheduler = options.scheduler();
    boolean owned = scheduler == null;
    if (scheduler == null) {
      ScheduledThreadPoolExecutor own =
          new ScheduledThreadPoolExecutor(1, new NamedThreadFactory("roster-client-scheduler"));
      own.setRemoveOnCancelPolicy(true);
      scheduler = own;
    }
    TlsSettings tls = options.tls();
    Connector connector = new GrpcConnector(options.keepAliveTime(), options.keepAliveTimeout(),
        "roster-java/" + VERSION, tls == null ? null : tls.credentials(),
        () -> token(options.token()));
    DefaultRosterClient client = new DefaultRosterClient(options, addresses, connector,
        scheduler, owned, Ticker.system(), new Random());
    client.start();
    Duration wait = options.requestTimeout().compareTo(BUILD_WAIT) < 0
        ? options.requestTimeout() : BUILD_WAIT;
    try {
      client.connection.awaitActive(wait);
    } catch (RosterException e) {
      // Refused credentials: the client keeps trying (a token supplier may have a new one), and
      // the calls that need the connection report the refusal.
      log.debug("No connection yet: {}", e.getMessage());
    }
    return client;
  }

  DefaultRosterClient(
      ClientOptions options,
      List<ServerAddress> addresses,
      Connector connector,
      ScheduledExecutorService scheduler,
      boolean ownsScheduler,
      Ticker ticker,
      Random random) {
    this.options = options;
    this.namespace = options.namespace();
    this.requestTimeout = options.requestTimeout();
    this.drainTimeout = options.drainTimeout();
    // Disk writes get their own thread: the scheduler runs keepalive pings and must not wait on
    // a slow disk. One thread also keeps the writes of one service in order.
    this.failoverWriter = options.failoverDir() == null ? null
        : Executors.newSingleThreadExecutor(new NamedThreadFactory("roster-failover-writer"));
    FailoverStore failover = failoverWriter == null || options.failoverDir() == null ? null : new FailoverStore(options.failoverDir(), failoverWriter);
    this.connector = connector;
    this.scheduler = scheduler;
    this.ownsScheduler = ownsScheduler;
    Executor listenerExecutor;
    if (options.listenerExecutor() != null) {
      listenerExecutor = options.listenerExecutor();
      this.ownedListenerExecutor = null;
    } else {
      this.ownedListenerExecutor =
          Executors.newCachedThreadPool(new NamedThreadFactory("roster-listener"));
      listenerExecutor = ownedListenerExecutor;
    }
    this.connection = new ConnectionManager(
        addresses,
        connector,
        scheduler,
        ticker,
        new Backoff(options.reconnectInitial(), options.reconnectMax(), random),
        new Backoff(ConnectionManager.AUTH_BACKOFF_INITIAL, ConnectionManager.AUTH_BACKOFF_MAX, random, 0.5),
        context,
        this,
        this::hello,
        this::nextRequestId,
        options.connectTimeout(),
        options.keepAliveTime(),
        options.keepAliveTimeout());
    Poller poller = new Poller(scheduler, options.pollInterval(), options.pollMaxBackoff(), context,
        new Poller.Target() {
          @Override
          public CompletableFuture<QueryAnswer> query(ServiceKey key, String knownChecksum) {
            return queries.poll(key, knownChecksum);
          }

          @Override
          public void apply(Subscription subscription, QueryAnswer answer) {
            cache.offerAnswer(subscription, answer.snapshot(), answer.warmUpRemainingMs());
          }
        });
    this.cache = new SubscriptionCache(context, scheduler, ticker, listenerExecutor,
        ownedListenerExecutor != null, options.pushEmptyProtection(), options.reconnectEmptyHold(),
        failover, connection::activeSession, options.pollEnabled() ? poller : null);
    this.desired = new DesiredState(context, connection, requestTimeout, this::ensureOpen, cache::keys);
    this.queries = new Queries(connection, new RegistryCalls(connector), cache, failover, namespace, requestTimeout,
        random,
        this::ensureOpen);
  }

  void start() {
    TlsSettings tls = options.tls();
    log.info("Starting Roster client {} (namespace {}, servers {}, {})", options.clientId(),
        namespace, connection.addresses(), tls == null ? "plaintext" : tls.mutual() ? "TLS with a client certificate" : "TLS");
    connection.start();
  }

  ConnectionManager connection() {
    return connection;
  }

  // ---- registrations ----

  @Override
  public void registerInstance(String serviceName, String ip, int port) {
    registerInstance(serviceName, DEFAULT_GROUP, Instance.of(ip, port));
  }

  @Override
  public void registerInstance(String serviceName, Instance instance) {
    registerInstance(serviceName, DEFAULT_GROUP, instance);
  }

  @Override
  public void registerInstance(String serviceName, @Nullable String group, Instance instance) {
    ensureOpen();
    ServiceKey key = key(serviceName, group);
    checkRegistrable(instance, "instance");
    desired.register(key, instance);
  }

  @Override
  public void deregisterInstance(String serviceName, String ip, int port) {
    deregisterInstance(serviceName, DEFAULT_GROUP, Instance.of(ip, port));
  }

  @Override
  public void deregisterInstance(String serviceName, Instance instance) {
    deregisterInstance(serviceName, DEFAULT_GROUP, instance);
  }

  @Override
  public void deregisterInstance(String serviceName, @Nullable String group, Instance instance) {
    ensureOpen();
    ServiceKey key = key(serviceName, group);
    Objects.requireNonNull(instance, "instance");
    desired.deregister(key, instance);
  }

  @Override
  public void batchRegisterInstance(String serviceName, List<Instance> instances) {
    batchRegisterInstance(serviceName, DEFAULT_GROUP, instances);
  }

  @Override
  public void batchRegisterInstance(String serviceName, @Nullable String group, List<Instance> instances) {
    ensureOpen();
    ServiceKey key = key(serviceName, group);
    Objects.requireNonNull(instances, "instances");
    Map<Identity, Instance> after = new LinkedHashMap<>();
    for (int i = 0; i < instances.size(); i++) {
      Instance instance = instances.get(i);
      checkRegistrable(instance, "instances[" + i + "]");
      after.put(Identity.of(instance), instance);
    }
    desired.batchRegister(key, after);
  }

  // ---- subscriptions ----

  @Override
  public void subscribe(String serviceName, Listener listener) {
    subscribe(serviceName, DEFAULT_GROUP, listener);
  }

  @Override
  public void subscribe(String serviceName, @Nullable String group, Listener listener) {
    ensureOpen();
    ServiceKey key = key(serviceName, group);
    Objects.requireNonNull(listener, "listener");
    SubscriptionCache.Added added = cache.subscribe(key, listener, this::ensureOpen);
    if (!added.created()) {
      return;
    }
    Subscription subscription = added.subscription();
    desired.reconcile("subscribe to " + key,
        () -> cache.isCurrent(key, subscription),
        new Request.Subscribe(key),
        () -> cache.drop(key, subscription),
        !added.fromFailover(), // served from the snapshot: subscribe on the server when connected
        null);
  }

  @Override
  public void unsubscribe(String serviceName, Listener listener) {
    unsubscribe(serviceName, DEFAULT_GROUP, listener);
  }

  @Override
  public void unsubscribe(String serviceName, @Nullable String group, Listener listener) {
    ensureOpen();
    ServiceKey key = key(serviceName, group);
    Objects.requireNonNull(listener, "listener");
    // One task across both parts: the unsubscribe frame cannot overtake the subscribe frame of
    // a subscription created right after this one is gone.
    context.run(() -> {
      ensureOpen();
      if (cache.unsubscribe(key, listener)) {
        desired.unsubscribe(key);
      }
    });
  }

  // ---- session callbacks ----

  /** Redo: the full desired state onto a new session. Called in the context. */
  @Override
  public List<CompletableFuture<Answer>> onWelcome(Session session, boolean seamless) {
    cache.onWelcome(seamless);
    return desired.redo(session);
  }

  @Override
  public List<CompletableFuture<Answer>> reclaim(Session session) {
    return desired.redoRegistrations(session);
  }

  @Override
  public void onPush(Session session, SessionEvents.Pushed push) {
    cache.onPush(session, push);
  }

  /** The server said it is warm: its held states are applied now. */
  @Override
  public void onWarmUpDone(Session session) {
    cache.onWarmUpDone(session);
  }

  // ---- queries ----

  @Override
  public List<Instance> getAllInstances(String serviceName) {
    return getAllInstances(serviceName, DEFAULT_GROUP);
  }

  @Override
  public List<Instance> getAllInstances(String serviceName, @Nullable String group) {
    ensureOpen();
    return queries.allInstances(key(serviceName, group));
  }

  @Override
  public List<Instance> selectInstances(String serviceName, boolean healthy) {
    return selectInstances(serviceName, DEFAULT_GROUP, healthy);
  }

  @Override
  public List<Instance> selectInstances(String serviceName, @Nullable String group, boolean healthy) {
    return selectInstances(serviceName, group, List.of(), healthy);
  }

  @Override
  public Instance selectOneHealthyInstance(String serviceName) {
    return selectOneHealthyInstance(serviceName, DEFAULT_GROUP);
  }

  @Override
  public Instance selectOneHealthyInstance(String serviceName, @Nullable String group) {
    return selectOneHealthyInstance(serviceName, group, List.of());
  }

  @Override
  public List<Instance> selectInstances(String serviceName, @Nullable String group, @Nullable List<String> clusters,
      boolean healthy) {
    ensureOpen();
    return queries.select(key(serviceName, group), clusters, healthy);
  }

  @Override
  public Instance selectOneHealthyInstance(String serviceName, @Nullable String group, @Nullable List<String> clusters) {
    ensureOpen();
    return queries.selectOneHealthy(key(serviceName, group), clusters);
  }

  @Override
  public ServicePage getServicesOfServer(int pageNo, int pageSize) {
    return getServicesOfServer(pageNo, pageSize, DEFAULT_GROUP);
  }

  @Override
  public ServicePage getServicesOfServer(int pageNo, int pageSize, @Nullable String group) {
    ensureOpen();
    if (pageNo < 1) {
      throw invalid("pageNo", String.valueOf(pageNo), ">= 1");
    }
    if (pageSize < 1 || pageSize > 1000) {
      throw invalid("pageSize", String.valueOf(pageSize), "1..1000");
    }
    return queries.servicesOfServer(pageNo, pageSize, group);
  }

  // ---- close ----

  @Override
  public DrainResult drain(Duration timeout) {
    ensureOpen();
    ClientOptions.checkDrainTimeout("timeout", timeout);
    return desired.drain(timeout);
  }

  @Override
  public void close() {
    boolean registered = desired.hasRegistrations();
    // Only when connected: with no server the drain could only wait out the request timeout.
    if (registered && !drainTimeout.isZero() && !closed.get() && connection.activeSession() != null) {
      try {
        drain(drainTimeout);
      } catch (RosterException e) {
        log.info("Closing without a confirmed drain: {}", e.getMessage());
      }
    }
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    cache.close();
    desired.clear();
    List<Throwable> errors = new ArrayList<>();
    run(errors, () -> connection.close(requestTimeout));
    run(errors, () -> connector.shutdown(requestTimeout));
    if (ownsScheduler) {
      run(errors, scheduler::shutdownNow);
    }
    if (ownedListenerExecutor != null) {
      run(errors, ownedListenerExecutor::shutdown);
    }
    if (failoverWriter != null) {
      run(errors, failoverWriter::shutdown); // queued writes still complete
    }
    for (Throwable t : errors) {
      log.warn("Error while closing the Roster client", t);
    }
    log.info("Closed Roster client {}", options.clientId());
  }

  private static void run(List<Throwable> errors, Runnable step) {
    try {
      step.run();
    } catch (RuntimeException e) {
      errors.add(e);
    }
  }

  // ---- helpers ----

  private ServiceKey key(String serviceName, @Nullable String group) {
    Objects.requireNonNull(serviceName, "serviceName");
    if (serviceName.isBlank()) {
      throw invalid("serviceName", "'" + serviceName + "'", "a non-empty name");
    }
    return new ServiceKey(namespace, group == null || group.isEmpty() ? DEFAULT_GROUP : group,
        serviceName);
  }

  private static void checkRegistrable(Instance instance, String field) {
    Objects.requireNonNull(instance, field);
    if (!instance.ephemeral()) {
      throw invalid(field + ".ephemeral", "false",
          "true: this client registers ephemeral instances only");
    }
  }

  private static RosterException invalid(String field, String value, String expected) {
    return new RosterException(Code.INVALID_ARGUMENT,
        field + ": " + value + " (expected: " + expected + ")", field, null);
  }

  private void ensureOpen() {
    if (closed.get()) {
      throw new ClientClosedException("the Roster client is closed");
    }
  }

  private Request.Hello hello() {
    return new Request.Hello(options.clientId(), namespace, options.clientName(), VERSION, options.labels(),
        List.of(Session.FEATURE_DELTA), 0, token(options.token())); // onPush applies deltas (DeltaApplier)
  }

  /** The credential {@code supplier} gives now, never null (one that fails or answers null means none). */
  static String token(Supplier<String> supplier) {
    try {
      String t = supplier.get();
      return t == null ? "" : t;
    } catch (RuntimeException e) {
      log.warn("The token supplier failed; going on without a token", e);
      return "";
    }
  }

  private String nextRequestId() {
    return Long.toString(requestIds.incrementAndGet());
  }

  /** The current cached list of a subscribed service, or null. For tests. */
  @Nullable List<Instance> cached(ServiceKey key) {
    return cache.cached(key);
  }

  /** The desired registrations of a service. For tests. */
  List<Instance> desired(ServiceKey key) {
    return desired.desired(key);
  }
}
