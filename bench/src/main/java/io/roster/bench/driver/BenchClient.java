package io.roster.bench.driver;

import java.util.List;
import java.util.function.Consumer;

/**
 * One registry client as the workloads drive it: the calls every workload needs, and nothing
 * else. Blocking calls return once the server applied them and throw an unchecked exception
 * when it refused or did not answer.
 *
 * <p>Thread-safe. Listeners run on a thread of the driver's choosing, must not block, and get
 * the complete visible list of the service each time it changes.
 */
public interface BenchClient extends AutoCloseable {

  /** Registers (or replaces) an ephemeral instance owned by this client. */
  void register(String service, Endpoint endpoint);

  /** Removes an instance this client registered. */
  void deregister(String service, Endpoint endpoint);

  /** Makes {@code endpoints} this client's complete set of instances of {@code service}. */
  void batchRegister(String service, List<Endpoint> endpoints);

  /** A non-subscribing query: asks the server for the current instances. */
  List<Endpoint> query(String service);

  /** Subscribes; {@code listener} gets the full list on every change (and the initial state). */
  void subscribe(String service, Consumer<List<Endpoint>> listener);

  /** Says goodbye: the server removes this client's instances and subscriptions. Idempotent. */
  @Override
  void close();
}
