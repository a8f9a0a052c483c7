package io.roster.bench;

import io.roster.bench.driver.Endpoint;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What one subscriber saw: for each port, when it first appeared in a pushed list and when it
 * first disappeared from one (System.nanoTime of the listener call). Ports identify the
 * instances of a workload. Thread-safe; the listener may run on any thread.
 */
final class Tracker {

  final Map<Integer, Long> seenAt = new ConcurrentHashMap<>();
  final Map<Integer, Long> goneAt = new ConcurrentHashMap<>();
  volatile long events;

  synchronized void onList(List<Endpoint> endpoints) {
    long now = System.nanoTime();
    events++;
    Set<Integer> ports = new HashSet<>();
    for (Endpoint e : endpoints) {
      ports.add(e.port());
      seenAt.putIfAbsent(e.port(), now);
    }
    for (Integer p : seenAt.keySet()) {
      if (!ports.contains(p)) {
        goneAt.putIfAbsent(p, now);
      }
    }
  }
}
