package io.roster.client;

import io.roster.client.internal.ClientFactory;
import io.roster.client.internal.ClientOptions;
import io.roster.client.internal.TlsSettings;
import java.time.Duration;
import java.util.List;
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
  final class Builder extends BuilderSettings {

    private Builder() {}

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
      // The TLS files first: a missing one is named before the other settings are checked.
      TlsSettings tls = tlsTrust == null ? null : TlsSettings.load(tlsTrust, tlsCertificate, tlsKey);
      return ClientFactory.create(new ClientOptions(
          randomStart ? rotated(serverAddresses) : serverAddresses,
          namespace, clientId, clientName, labels, requestTimeout,
          connectTimeout != null ? connectTimeout : requestTimeout,
          pollInterval, pollMaxBackoff, pollEnabled, reconnectInitial, reconnectMax, keepAliveTime,
          keepAliveTimeout, drainTimeout, reconnectEmptyHold, pushEmptyProtection, failoverDir,
          scheduler, listenerExecutor, tls, token));
    }
  }
}
