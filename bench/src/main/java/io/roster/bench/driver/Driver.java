package io.roster.bench.driver;

/**
 * Makes {@link BenchClient}s for one registry product. The workloads have one code path and run
 * over either driver: {@code roster} (the Roster SDK) or {@code nacos} (nacos-client 2.x).
 *
 * <p>Thread-safe: clients may be created from many threads at once.
 */
public interface Driver extends AutoCloseable {

  /** The driver's name, as given to {@code --driver}. */
  String name();

  /**
   * A full client, as an application would create it. Returns once it is connected (or
   * throws).
   *
   * @param clientId stable id of the client, unique within the run
   */
  BenchClient client(String clientId);

  /**
   * A client for the workloads that open thousands of them in one JVM (W1, W5, W8). It does
   * the same things as {@link #client}, but may share threads with the other clients; by
   * default it is a full client.
   */
  default BenchClient massClient(String clientId) {
    return client(clientId);
  }

  /** Says how {@link #massClient} clients are made, for the report. */
  String describeMassClients();

  /** Releases what the driver shares between its clients (not the clients themselves). */
  @Override
  void close();
}
