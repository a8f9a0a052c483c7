package io.roster.it;

import io.roster.client.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.RosterClient;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.awaitility.Awaitility;

/** An SDK client subscribed to one service, remembering the latest list and when it came. */
final class Subscriber implements AutoCloseable {

  final RosterClient client;
  private volatile List<Instance> latest = List.of();
  private volatile long latestAtNanos;

  Subscriber(String servers, String service) {
    this(RosterClient.builder().serverAddresses(servers).clientName("it-subscriber").build(), service);
  }

  Subscriber(RosterClient client, String service) {
    this.client = client;
    client.subscribe(service, this::onEvent);
  }

  private void onEvent(InstancesChangeEvent e) {
    latestAtNanos = System.nanoTime();
    latest = e.instances();
  }

  List<Instance> latest() {
    return latest;
  }

  /** Waits until the latest list matches; returns System.nanoTime() of the event that matched. */
  long await(Duration atMost, Predicate<List<Instance>> p) {
    Awaitility.await().atMost(atMost).pollInterval(Duration.ofMillis(1)).until(() -> p.test(latest));
    return latestAtNanos;
  }

  static Predicate<List<Instance>> hasPort(int port) {
    return list -> list.stream().anyMatch(i -> i.port() == port);
  }

  static Predicate<List<Instance>> lacksPort(int port) {
    return hasPort(port).negate();
  }

  @Override
  public void close() {
    client.close();
  }
}
