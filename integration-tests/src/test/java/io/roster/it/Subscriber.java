package io.roster.it;

import io.roster.client.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.Listener;
import io.roster.client.RosterClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.awaitility.Awaitility;

/** An SDK client subscribed to one service, remembering the latest list and when it came. */
final class Subscriber implements AutoCloseable {

  final RosterClient client;
  private final String service;
  private volatile List<Instance> latest = List.of();
  private volatile long latestAtNanos;

  Subscriber(String servers, String service) {
    this(RosterClient.builder().serverAddresses(servers).clientName("it-subscriber").build(), service);
  }

  Subscriber(RosterClient client, String service) {
    this.client = client;
    this.service = service;
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
    Awaitility.await().atMost(atMost).pollInterval(Duration.ofMillis(1)).untilAsserted(() -> {
      List<Instance> now = latest;
      if (!p.test(now)) {
        throw new AssertionError("the latest list of " + service + " does not match yet (" + now.size() + " instances): " + now);
      }
    });
    return latestAtNanos;
  }

  /**
   * The client's cached state of a subscribed service, revision included: a listener added to
   * a cached service hears it at once. (A new revision with the same list fires no event, so
   * the latest event alone cannot say which server the state came from.)
   */
  static InstancesChangeEvent cached(RosterClient client, String service) {
    CompletableFuture<InstancesChangeEvent> first = new CompletableFuture<>();
    Listener probe = first::complete;
    client.subscribe(service, probe);
    try {
      return first.get(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new AssertionError("no cached state of " + service, e);
    } finally {
      client.unsubscribe(service, probe);
    }
  }

  /** This subscriber's cached state (see {@link #cached(RosterClient, String)}). */
  InstancesChangeEvent cached() {
    return cached(client, service);
  }

  /**
   * Waits until the cached state is one the server made after {@code revisionBefore} (revisions
   * are wall-clock microseconds, so a restarted server's are newer) and its list matches.
   */
  InstancesChangeEvent awaitNewer(Duration atMost, long revisionBefore, Predicate<List<Instance>> p) {
    AtomicReference<InstancesChangeEvent> seen = new AtomicReference<>();
    Awaitility.await("a cached state of " + service + " newer than revision " + revisionBefore + " that matches")
        .atMost(atMost).pollInterval(Duration.ofMillis(20)).until(() -> {
      InstancesChangeEvent now = cached();
      seen.set(now);
      return now.revision() > revisionBefore && p.test(now.instances());
    });
    return seen.get();
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
