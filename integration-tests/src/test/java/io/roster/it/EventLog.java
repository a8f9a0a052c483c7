package io.roster.it;

import io.roster.client.InstancesChangeEvent;
import io.roster.client.RosterClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * A subscriber that records every listener event of one service as the set of its instances
 * ("ip:port"), to check afterwards that no event lacked an instance that was alive throughout.
 * Thread-safe; the SDK calls {@link #onEvent} in order.
 */
final class EventLog {

  /** One event: when it came (ms since the log began, and wall-clock ms) and the instances it held. */
  record Event(long atMs, long wallMs, Set<String> instances) {}

  final String name;
  private final long startNanos = System.nanoTime();
  private final List<Event> events = new CopyOnWriteArrayList<>();
  private volatile int armedAt;

  EventLog(String name) {
    this.name = name;
  }

  /** Subscribes {@code client} to {@code service}, recording into a new log. */
  static EventLog subscribe(String name, RosterClient client, String service) {
    EventLog log = new EventLog(name);
    client.subscribe(service, log::onEvent);
    return log;
  }

  void onEvent(InstancesChangeEvent e) {
    events.add(new Event((System.nanoTime() - startNanos) / 1_000_000, System.currentTimeMillis(),
        e.instances().stream().map(i -> i.ip() + ":" + i.port()).collect(Collectors.toCollection(TreeSet::new))));
  }

  List<Event> events() {
    return List.copyOf(events);
  }

  /** The latest event's instances; empty before the first. */
  Set<String> latest() {
    return events.isEmpty() ? Set.of() : events.get(events.size() - 1).instances();
  }

  /** From now on events count (those of the start-up, while registrations arrive, do not). */
  void arm() {
    armedAt = events.size();
  }

  /**
   * The events since {@link #arm} that lack an instance of {@code live} (instances whose
   * clients were alive throughout), each described with what it lacked.
   */
  List<String> flaps(Set<String> live) {
    List<String> flaps = new ArrayList<>();
    List<Event> all = events();
    for (int k = armedAt; k < all.size(); k++) {
      Set<String> missing = new TreeSet<>(live);
      missing.removeAll(all.get(k).instances());
      if (!missing.isEmpty()) {
        flaps.add(name + " event " + k + " at " + all.get(k).atMs() + " ms (" + clock(all.get(k)) + ") lacked "
            + abbreviate(missing)
            + " (had " + all.get(k).instances().size() + ")");
      }
    }
    return flaps;
  }

  /** The events since {@link #arm} that hold an instance of {@code gone} (ghosts), described. */
  List<String> ghosts(Set<String> gone) {
    List<String> ghosts = new ArrayList<>();
    List<Event> all = events();
    for (int k = armedAt; k < all.size(); k++) {
      Set<String> back = new TreeSet<>(gone);
      back.retainAll(all.get(k).instances());
      if (!back.isEmpty()) {
        ghosts.add(name + " event " + k + " at " + all.get(k).atMs() + " ms (" + clock(all.get(k)) + ") held "
            + abbreviate(back));
      }
    }
    return ghosts;
  }

  /** The event's wall-clock time as HH:mm:ss.SSS, to match the server logs. */
  static String clock(Event e) {
    return String.format("%tT.%<tL", e.wallMs());
  }

  int size() {
    return events.size();
  }

  static String abbreviate(Set<String> s) {
    return s.size() <= 8 ? s.toString() : s.stream().limit(8).toList() + " and " + (s.size() - 8) + " more";
  }

  /** For assertion messages. */
  static Supplier<String> describe(List<String> flaps) {
    return () -> flaps.size() + " flaps: " + flaps.stream().limit(20).collect(Collectors.joining("\n  ", "\n  ", ""));
  }
}
