package io.roster.client;

import io.roster.client.internal.ClientFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A connection to a Roster registry: register this process's instances, look up and subscribe
 * to other services. Method names follow the Nacos {@code NamingService} ones.
 *
 * <p>Create one with {@link #builder()} and keep it for the life of the application. The client
 * holds one long connection (a {@code Session/Connect} stream) to one server of the list at a
 * time. The instances it registers are ephemeral: they live as long as that connection. The
 * client remembers what it registered and subscribed to, and after every reconnect (to the
 * same or another server) it registers and subscribes again on its own. {@link #close()} says
 * goodbye: the server then removes this client's instances and subscriptions at once.
 *
 * <p>Threading: a {@code RosterClient} is thread-safe; every method may be called from any
 * thread. Blocking methods wait at most the {@linkplain Builder#requestTimeout request timeout}
 * (about that long when no server can be reached). {@link Listener}s run on the listener
 * executor (see {@link Builder#listenerExecutor}), one event at a time and in order per service,
 * never inside the client's own work (the client holds no lock while they run).
 *
 * <p>Errors: every method throws only the unchecked {@link RosterException} (code says why) and,
 * after {@link #close()}, its subtype {@link ClientClosedException}; null arguments throw
 * {@link NullPointerException}. A {@code group} that is null or empty means
 * {@value #DEFAULT_GROUP}.
 */
public interface RosterClient extends AutoCloseable {

  /** The group used when none is given. */
  String DEFAULT_GROUP = "DEFAULT_GROUP";

  /** The namespace used when none is configured. */
  String DEFAULT_NAMESPACE = "public";

  /**
   * Returns a new builder.
   *
   * @return a builder with every default set; {@link Builder#serverAddresses} is required
   */
  static Builder builder() {
    return new Builder();
  }

  /**
   * Registers an instance with default settings ({@link Instance#of}) in the default group.
   *
   * @param serviceName the service
   * @param ip address consumers connect to
   * @param port TCP port
   * @throws RosterException see {@link #registerInstance(String, String, Instance)}
   */
  void registerInstance(String serviceName, String ip, int port);

  /**
   * Registers an instance in the default group.
   *
   * @param serviceName the service
   * @param instance the instance
   * @throws RosterException see {@link #registerInstance(String, String, Instance)}
   */
  void registerInstance(String serviceName, Instance instance);

  /**
   * Registers (or replaces, when one with the same ip, port and cluster exists) an ephemeral
   * instance owned by this client. The client remembers it and registers it again after every
   * reconnect, until it is deregistered or the client is closed.
   *
   * <p>Blocks until the server applied it. When the server rejects it (an invalid name, a
   * limit), the client forgets it and throws the server's code and message. When no server can
   * be reached within the request timeout, the client <em>keeps</em> it (it is registered as
   * soon as a connection is made) and throws {@code UNAVAILABLE}.
   *
   * @param serviceName the service
   * @param group the group; null or empty means {@value #DEFAULT_GROUP}
   * @param instance the instance; must be ephemeral (this client registers only instances owned
   *     by its connection); a disabled instance or one of weight 0 is registered but takes no
   *     traffic; its healthy flag and instance id are set by the server
   * @throws RosterException INVALID_ARGUMENT / RESOURCE_EXHAUSTED / ... from the server,
   *     UNAVAILABLE when not connected in time, TIMEOUT when the server did not answer in time
   *     (the registration is kept in both cases)
   */
  void registerInstance(String serviceName, @Nullable String group, Instance instance);

  /**
   * Deregisters an instance (matched by ip, port and the default cluster) of the default group.
   *
   * @param serviceName the service
   * @param ip the instance's ip
   * @param port the instance's port
   * @throws RosterException see {@link #deregisterInstance(String, String, Instance)}
   */
  void deregisterInstance(String serviceName, String ip, int port);

  /**
   * Deregisters an instance of the default group.
   *
   * @param serviceName the service
   * @param instance the instance; only ip, port and cluster are read
   * @throws RosterException see {@link #deregisterInstance(String, String, Instance)}
   */
  void deregisterInstance(String serviceName, Instance instance);

  /**
   * Deregisters an instance this client registered, matched by ip, port and cluster; the client
   * stops re-registering it. Deregistering an instance that is not registered is not an error.
   * When the client is not connected it returns at once: the instance is not registered on any
   * live connection of this client and will not be registered again.
   *
   * @param serviceName the service
   * @param group the group; null or empty means {@value #DEFAULT_GROUP}
   * @param instance the instance; only ip, port and cluster are read
   * @throws RosterException INVALID_ARGUMENT from the server, TIMEOUT when it did not answer
   */
  void deregisterInstance(String serviceName, @Nullable String group, Instance instance);

  /**
   * Replaces this client's instances of a service (default group) with the given list.
   *
   * @param serviceName the service
   * @param instances the complete new set; empty removes them all
   * @throws RosterException see {@link #batchRegisterInstance(String, String, List)}
   */
  void batchRegisterInstance(String serviceName, List<Instance> instances);

  /**
   * Replaces this client's instances of a service with the given list in one change
   * (subscribers see a single event). Errors behave as for
   * {@link #registerInstance(String, String, Instance)}: a rejected list is forgotten (the
   * previous set is restored), an unreachable server keeps it for the next connection.
   *
   * @param serviceName the service
   * @param group the group; null or empty means {@value #DEFAULT_GROUP}
   * @param instances the complete new set; empty removes them all
   * @throws RosterException as for {@link #registerInstance(String, String, Instance)}
   */
  void batchRegisterInstance(String serviceName, @Nullable String group, List<Instance> instances);

  /**
   * Returns every visible instance of a service of the default group.
   *
   * @param serviceName the service
   * @return the instances; unmodifiable
   * @throws RosterException see {@link #getAllInstances(String, String)}
   */
  List<Instance> getAllInstances(String serviceName);

  /**
   * Returns every visible (enabled) instance of a service, healthy or not. When the service is
   * subscribed and its state has arrived, the answer comes from the local cache; otherwise the
   * client asks a server: with a {@code query} frame on its session when the server offers it,
   * else with {@code Registry/QueryInstances}. An unknown service has no instances.
   *
   * @param serviceName the service
   * @param group the group; null or empty means {@value #DEFAULT_GROUP}
   * @return the instances, sorted as the server sorts them; unmodifiable
   * @throws RosterException UNAVAILABLE / TIMEOUT when no server answered in time,
   *     INVALID_ARGUMENT for an invalid name
   */
  List<Instance> getAllInstances(String serviceName, @Nullable String group);

  /**
   * Returns the enabled instances with weight &gt; 0 whose healthy flag equals {@code healthy},
   * of a service of the default group.
   *
   * @param serviceName the service
   * @param healthy true for healthy instances, false for unhealthy ones
   * @return the instances; unmodifiable
   * @throws RosterException as for {@link #getAllInstances(String, String)}
   */
  List<Instance> selectInstances(String serviceName, boolean healthy);

  /**
   * Returns the enabled instances with weight &gt; 0 whose healthy flag equals {@code healthy}.
   *
   * @param serviceName the service
   * @param group the group; null or empty means {@value #DEFAULT_GROUP}
   * @param healthy true for healthy instances, false for unhealthy ones
   * @return the instances; unmodifiable
   * @throws RosterException as for {@link #getAllInstances(String, String)}
   */
  List<Instance> selectInstances(String serviceName, @Nullable String group, boolean healthy);

  /**
   * Picks one healthy, enabled instance with weight &gt; 0 of a service of the default group,
   * at random in proportion to the weights.
   *
   * @param serviceName the service
   * @return the chosen instance
   * @throws RosterException NO_INSTANCE_AVAILABLE when there is none, or as for
   *     {@link #getAllInstances(String, String)}
   */
  Instance selectOneHealthyInstance(String serviceName);

  /**
   * Picks one healthy, enabled instance with weight &gt; 0 at random in proportion to the
   * weights (an instance of weight 2 is chosen twice as often as one of weight 1).
   *
   * @param serviceName the service
   * @param group the group; null or empty means {@value #DEFAULT_GROUP}
   * @return the chosen instance
   * @throws RosterException NO_INSTANCE_AVAILABLE when there is none, or as for
   *     {@link #getAllInstances(String, String)}
   */
  Instance selectOneHealthyInstance(String serviceName, @Nullable String group);

  /**
   * Like {@link #selectInstances(String, String, boolean)}, restricted to instances of the
   * given clusters.
   *
   * @param serviceName the service
   * @param group the group; null or empty means {@value #DEFAULT_GROUP}
   * @param clusters cluster names; null or empty means every cluster
   * @param healthy true for healthy instances, false for unhealthy ones
   * @return the instances; unmodifiable
   * @throws RosterException as for {@link #getAllInstances(String, String)}
   */
  List<Instance> selectInstances(String serviceName, @Nullable String group, @Nullable List<String> clusters, boolean healthy);

  /**
   * Like {@link #selectOneHealthyInstance(String, String)}, restricted to instances of the
   * given clusters (e.g. the caller's own zone first, then any).
   *
   * @param serviceName the service
   * @param group the group; null or empty means {@value #DEFAULT_GROUP}
   * @param clusters cluster names; null or empty means every cluster
   * @return the chosen instance
   * @throws RosterException NO_INSTANCE_AVAILABLE when none of those clusters has one (the
   *     message names the clusters), or as for {@link #getAllInstances(String, String)}
   */
  Instance selectOneHealthyInstance(String serviceName, @Nullable String group, @Nullable List<String> clusters);

  /**
   * Subscribes a listener to a service of the default group.
   *
   * @param serviceName the service
   * @param listener the listener
   * @throws RosterException see {@link #subscribe(String, String, Listener)}
   */
  void subscribe(String serviceName, Listener listener);

  /**
   * Subscribes a listener to a service. The client subscribes on the server (pushes) and, unless
   * disabled, polls the service as a fallback; it caches the latest state and calls the listener
   * whenever the visible content changes, with the full list and the difference. A listener
   * added to a service whose state is already cached gets that state at once, as an event with
   * every instance in {@code added}. Adding the same listener twice has no effect.
   *
   * <p>When the server rejects the subscription (an invalid name), the listener is removed and
   * the server's error is thrown. When no server can be reached within the request timeout the
   * subscription is kept (it is made as soon as a connection is) and {@code UNAVAILABLE} is
   * thrown.
   *
   * @param serviceName the service
   * @param group the group; null or empty means {@value #DEFAULT_GROUP}
   * @param listener the listener; runs as described in {@link Listener}
   * @throws RosterException INVALID_ARGUMENT / RESOURCE_EXHAUSTED from the server,
   *     UNAVAILABLE when not connected in time, TIMEOUT when the server did not answer
   */
  void subscribe(String serviceName, @Nullable String group, Listener listener);

  /**
   * Removes a listener from a service of the default group.
   *
   * @param serviceName the service
   * @param listener the listener
   * @throws RosterException see {@link #unsubscribe(String, String, Listener)}
   */
  void unsubscribe(String serviceName, Listener listener);

  /**
   * Removes a listener. When the last listener of a service goes, the client unsubscribes on the
   * server, stops polling the service and drops its cached state. Removing a listener that is
   * not subscribed has no effect. Does not wait for the server.
   *
   * @param serviceName the service
   * @param group the group; null or empty means {@value #DEFAULT_GROUP}
   * @param listener the listener
   * @throws ClientClosedException when the client is closed
   */
  void unsubscribe(String serviceName, @Nullable String group, Listener listener);

  /**
   * Returns one page of the names of the services of the default group in this client's
   * namespace.
   *
   * @param pageNo 1-based page number
   * @param pageSize names per page, 1..1000
   * @return the page
   * @throws RosterException see {@link #getServicesOfServer(int, int, String)}
   */
  ServicePage getServicesOfServer(int pageNo, int pageSize);

  /**
   * Returns one page of the names of the services of a group in this client's namespace, sorted
   * by name ({@code Registry/ListServices}).
   *
   * @param pageNo 1-based page number, &ge; 1
   * @param pageSize names per page, 1..1000
   * @param group the group; null or empty means {@value #DEFAULT_GROUP}
   * @return the page
   * @throws RosterException INVALID_ARGUMENT for a bad page, UNAVAILABLE / TIMEOUT when no
   *     server answered in time
   */
  ServicePage getServicesOfServer(int pageNo, int pageSize, @Nullable String group);

  /**
   * Takes every instance this client registered out of service and waits until consumers have
   * stopped seeing them: the server deregisters them all, pushes the change, and answers once
   * every other client subscribed to those services has acknowledged it (or disconnected), or
   * when {@code timeout} passes. The instances are forgotten locally too, so a reconnect does
   * not register them again; subscriptions stay. Use it before stopping a provider so that no
   * consumer calls it afterwards.
   *
   * @param timeout how long the server waits for acknowledgements, zero to 60 s; zero means
   *     the server default (5 s)
   * @return the counts: subscribers notified, acked, timed out, disconnected
   * @throws RosterException INVALID_ARGUMENT for a bad timeout, UNAVAILABLE when not connected
   *     (the server then removes the instances when it notices the connection is gone)
   * @throws ClientClosedException when the client is closed
   */
  DrainResult drain(Duration timeout);

  /**
   * Closes the client; idempotent. When this client registered instances, first drains them
   * (see {@link #drain(Duration)}, bounded by {@link Builder#drainTimeout(Duration)}). Then stops
   * polling, says goodbye to the server (half-closes the session: the server removes this
   * client's instances and subscriptions and pushes the change to subscribers), waits at most
   * the request timeout for the server to finish, then releases the connection and threads.
   * Pending listener events are dropped. Every later call, and every call still waiting, throws
   * {@link ClientClosedException}.
   */
  @Override
  void close();

  /**
   * Configures and builds a {@link RosterClient}. Not thread-safe; every setting has a default
   * except {@link #serverAddresses}, and may be made once: a second call of the same setter
   * throws {@link IllegalStateException} naming the setting and its value. Every time setting is
   * a {@link Duration}.
   */
  final class Builder {
    private @Nullable String serverAddresses;
    private boolean randomStart = true;
    private String namespace = DEFAULT_NAMESPACE;
    private String clientId = UUID.randomUUID().toString();
    private String clientName = "roster-java";
    private Map<String, String> labels = Map.of();
    private Duration requestTimeout = Duration.ofSeconds(3);
    private @Nullable Duration connectTimeout;
    private Duration pollInterval = Duration.ofSeconds(10);
    private Duration pollMaxBackoff = Duration.ofSeconds(60);
    private boolean pollEnabled = true;
    private Duration reconnectInitial = Duration.ofMillis(100);
    private Duration reconnectMax = Duration.ofSeconds(3);
    private Duration keepAliveTime = Duration.ofSeconds(5);
    private Duration keepAliveTimeout = Duration.ofSeconds(5);
    private Duration drainTimeout = Duration.ofSeconds(3);
    private Duration reconnectEmptyHold = Duration.ofSeconds(4);
    private boolean pushEmptyProtection;
    private @Nullable Path failoverDir;
    private @Nullable Executor listenerExecutor;
    private @Nullable ScheduledExecutorService scheduler;
    private @Nullable Path tlsTrust;
    private @Nullable Path tlsCertificate;
    private @Nullable Path tlsKey;
    private Supplier<String> token = () -> "";

    /** The settings made so far: each may be made once. */
    private final Set<String> made = new HashSet<>();

    private Builder() {}

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
    public Builder serverAddresses(String addresses) {
      Objects.requireNonNull(addresses, "addresses");
      once("serverAddresses", serverAddresses);
      this.serverAddresses = addresses;
      return this;
    }

    /**
     * Whether the client starts at a random server of its list (the default) or at the first.
     * Either way it goes on through the list in order, wrapping around. Start at the first to
     * prefer one server (the nearest) and use the others only when it fails.
     *
     * @param value true to start at a random server (default), false to start at the first
     * @return this builder
     */
    public Builder randomStart(boolean value) {
      once("randomStart", randomStart);
      this.randomStart = value;
      return this;
    }

    /**
     * Sets the namespace (tenant) every call of this client works in. Default
     * {@value RosterClient#DEFAULT_NAMESPACE}.
     *
     * @param value the namespace
     * @return this builder
     */
    public Builder namespace(String value) {
      Objects.requireNonNull(value, "namespace");
      once("namespace", namespace);
      this.namespace = value;
      return this;
    }

    /**
     * Sets the client id sent in {@code hello}; stable for the life of the client, across
     * reconnects. Default: a random UUID.
     *
     * @param value the id, at most 128 characters
     * @return this builder
     */
    public Builder clientId(String value) {
      Objects.requireNonNull(value, "clientId");
      once("clientId", clientId);
      this.clientId = value;
      return this;
    }

    /**
     * Sets a free-form client name shown by the server's admin API. Default
     * {@code roster-java}.
     *
     * @param value the name
     * @return this builder
     */
    public Builder clientName(String value) {
      Objects.requireNonNull(value, "clientName");
      once("clientName", clientName);
      this.clientName = value;
      return this;
    }

    /**
     * Sets labels shown by the server's admin API, e.g. the application name. Default none.
     *
     * @param value the labels (copied)
     * @return this builder
     */
    public Builder labels(Map<String, String> value) {
      Map<String, String> copy = Map.copyOf(value);
      once("labels", labels);
      this.labels = copy;
      return this;
    }

    /**
     * Sets how long a blocking call waits: for a connection, then for the server's answer.
     * Also bounds how long {@link RosterClient#close()} waits for the server. Default 3 s.
     *
     * @param value a positive duration
     * @return this builder
     */
    public Builder requestTimeout(Duration value) {
      Objects.requireNonNull(value, "requestTimeout");
      once("requestTimeout", requestTimeout);
      this.requestTimeout = value;
      return this;
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
    public Builder connectTimeout(Duration value) {
      Objects.requireNonNull(value, "connectTimeout");
      once("connectTimeout", connectTimeout);
      this.connectTimeout = value;
      return this;
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
    public Builder drainTimeout(Duration value) {
      Objects.requireNonNull(value, "drainTimeout");
      once("drainTimeout", drainTimeout);
      this.drainTimeout = value;
      return this;
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
    public Builder reconnectEmptyHold(Duration value) {
      Objects.requireNonNull(value, "reconnectEmptyHold");
      once("reconnectEmptyHold", reconnectEmptyHold);
      this.reconnectEmptyHold = value;
      return this;
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
    public Builder pushEmptyProtection(boolean value) {
      once("pushEmptyProtection", pushEmptyProtection);
      this.pushEmptyProtection = value;
      return this;
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
    public Builder failoverDir(Path dir) {
      once("failoverDir", failoverDir);
      this.failoverDir = dir;
      return this;
    }

    /**
     * Sets how often each subscribed service is polled as a fallback to pushes. Default 10 s.
     *
     * @param value a positive duration
     * @return this builder
     */
    public Builder pollInterval(Duration value) {
      Objects.requireNonNull(value, "pollInterval");
      once("pollInterval", pollInterval);
      this.pollInterval = value;
      return this;
    }

    /**
     * Sets the longest wait between polls of a service while polls fail (the wait doubles from
     * the poll interval). Default 60 s.
     *
     * @param value a duration &ge; the poll interval
     * @return this builder
     */
    public Builder pollMaxBackoff(Duration value) {
      Objects.requireNonNull(value, "pollMaxBackoff");
      once("pollMaxBackoff", pollMaxBackoff);
      this.pollMaxBackoff = value;
      return this;
    }

    /**
     * Turns the poll fallback on or off. Default on.
     *
     * @param value true to poll
     * @return this builder
     */
    public Builder pollEnabled(boolean value) {
      once("pollEnabled", pollEnabled);
      this.pollEnabled = value;
      return this;
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
    public Builder reconnectBackoff(Duration initial, Duration max) {
      Objects.requireNonNull(initial, "initial");
      Objects.requireNonNull(max, "max");
      once("reconnectBackoff", reconnectInitial + " .. " + reconnectMax);
      this.reconnectInitial = initial;
      this.reconnectMax = max;
      return this;
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
    public Builder keepAlive(Duration time, Duration timeout) {
      Objects.requireNonNull(time, "time");
      Objects.requireNonNull(timeout, "timeout");
      once("keepAlive", keepAliveTime + " / " + keepAliveTimeout);
      this.keepAliveTime = time;
      this.keepAliveTimeout = timeout;
      return this;
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
    public Builder scheduler(ScheduledExecutorService value) {
      Objects.requireNonNull(value, "scheduler");
      once("scheduler", scheduler);
      this.scheduler = value;
      return this;
    }

    /**
     * Sets the executor {@link Listener}s run on. The client still runs the events of one
     * service one at a time and in order. The client does not shut it down. Default: a cached
     * pool of daemon threads named {@code roster-listener-N}, owned by the client.
     *
     * @param value the executor
     * @return this builder
     */
    public Builder listenerExecutor(Executor value) {
      Objects.requireNonNull(value, "listenerExecutor");
      once("listenerExecutor", listenerExecutor);
      this.listenerExecutor = value;
      return this;
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
    public Builder tlsTrust(Path caPem) {
      Objects.requireNonNull(caPem, "caPem");
      once("tlsTrust", tlsTrust);
      this.tlsTrust = caPem;
      return this;
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
    public Builder tlsClientCertificate(Path certificatePem, Path keyPem) {
      Objects.requireNonNull(certificatePem, "certificatePem");
      Objects.requireNonNull(keyPem, "keyPem");
      once("tlsClientCertificate", tlsCertificate + " / " + tlsKey);
      this.tlsCertificate = certificatePem;
      this.tlsKey = keyPem;
      return this;
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
    public Builder token(String value) {
      Objects.requireNonNull(value, "token");
      once("token", "(set)");
      this.token = () -> value;
      return this;
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
    public Builder tokenSupplier(Supplier<String> value) {
      Objects.requireNonNull(value, "tokenSupplier");
      once("token", "(set)");
      this.token = value;
      return this;
    }

    /** The comma-separated list started at a random entry, in the same circular order. */
    private static String rotated(String addresses) {
      String[] entries = addresses.split(",", -1);
      if (entries.length < 2) {
        return addresses;
      }
      int start = java.util.concurrent.ThreadLocalRandom.current().nextInt(entries.length);
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < entries.length; i++) {
        b.append(i == 0 ? "" : ",").append(entries[(start + i) % entries.length]);
      }
      return b.toString();
    }

    /**
     * Validates the settings, builds the client and starts connecting.
     *
     * <p>Blocks only briefly: until the first connection is established or for at most one
     * second (or the request timeout, when shorter), whichever comes first. It never fails
     * because no server is reachable: the client keeps trying in the background, and calls wait
     * for it as their documentation says.
     *
     * @return the client; close it when done
     * @throws RosterException INVALID_ARGUMENT when a setting is invalid, or a TLS file is missing
     *     or not what its setting expects (the message names the setting, and the file)
     */
    public RosterClient build() {
      if (serverAddresses == null) {
        throw new RosterException(RosterException.Code.INVALID_ARGUMENT,
            "serverAddresses: null (expected: host:port[,host:port...])", "serverAddresses",
            null);
      }
      if (tlsCertificate != null && tlsTrust == null) {
        throw new RosterException(RosterException.Code.INVALID_ARGUMENT,
            "tlsClientCertificate: " + tlsCertificate + " without tlsTrust (expected: tlsTrust(caPem) too; a client "
                + "certificate is presented over TLS only)", "tlsClientCertificate", null);
      }
      return ClientFactory.create(
          randomStart ? rotated(serverAddresses) : serverAddresses,
          namespace,
          clientId,
          clientName,
          labels,
          requestTimeout,
          connectTimeout != null ? connectTimeout : requestTimeout,
          pollInterval,
          pollMaxBackoff,
          pollEnabled,
          reconnectInitial,
          reconnectMax,
          keepAliveTime,
          keepAliveTimeout,
          drainTimeout,
          reconnectEmptyHold,
          pushEmptyProtection,
          failoverDir,
          scheduler,
          listenerExecutor,
          tlsTrust,
          tlsCertificate,
          tlsKey,
          token);
    }
  }
}
