package io.roster.it;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.DeregisterInstanceRequest;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Persistent writes through every member while faults strike, and what each came to: a thread
 * registers persistent instances of one service through a random member, now and then removes
 * one it registered, and records every answer. An acknowledged registration must be on every
 * member once the cluster is whole again, an acknowledged removal must be gone; a write that
 * failed or timed out may have happened or not ({@link #unknown()}). Never registers or removes
 * an instance twice at once.
 */
final class PersistentWriter implements AutoCloseable {

  /** What the writer knows of one instance. */
  enum Known { PRESENT, ABSENT, UNKNOWN }

  private final ServiceKey service;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final Map<String, Known> known = new ConcurrentHashMap<>();
  private final Random random;
  private final Thread thread;
  private volatile boolean running = true;
  private int acked;
  private int failed;
  private int notFound;

  PersistentWriter(List<String> members, String service, long seed) {
    this.service = ServiceKey.newBuilder().setName(service).build();
    this.random = new Random(seed);
    for (String m : members) {
      channels.add(NettyChannelBuilder.forTarget(m).usePlaintext().build());
    }
    thread = new Thread(this::run, "persistent-writer");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    int next = 0;
    while (running) {
      RegistryGrpc.RegistryBlockingStub registry = RegistryGrpc.newBlockingStub(channels.get(random.nextInt(
          channels.size()))).withDeadlineAfter(3, TimeUnit.SECONDS);
      List<String> present = known.entrySet().stream().filter(e -> e.getValue() == Known.PRESENT)
          .map(Map.Entry::getKey).toList();
      boolean remove = !present.isEmpty() && random.nextInt(5) == 0;
      String address = remove ? present.get(random.nextInt(present.size())) : address(next++);
      String ip = address.substring(0, address.indexOf(':'));
      int port = Integer.parseInt(address.substring(address.indexOf(':') + 1));
      try {
        if (remove) {
          boolean found = registry.deregisterInstance(DeregisterInstanceRequest.newBuilder().setService(service)
              .setIp(ip).setPort(port).build()).getDeregistered();
          if (!found) {
            notFound++; // it was registered and acknowledged: the removal should have found it
          }
          known.put(address, Known.ABSENT);
        } else {
          registry.registerInstance(RegisterInstanceRequest.newBuilder().setService(service)
              .setInstance(Instance.newBuilder().setIp(ip).setPort(port)).build());
          known.put(address, Known.PRESENT);
        }
        acked++;
      } catch (StatusRuntimeException e) {
        // Refused before anything was proposed (a member catching up or cut off), or lost on the
        // way: either way the writer cannot tell whether it happened.
        known.put(address, e.getStatus().getCode() == Status.Code.INVALID_ARGUMENT ? known.getOrDefault(address,
            Known.ABSENT) : Known.UNKNOWN);
        failed++;
        java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // a client's back-off
      }
    }
  }

  private static String address(int n) {
    return "10.0.7." + (1 + n / 1000) + ":" + (5000 + n % 1000);
  }

  /** The instances whose last write was acknowledged as a registration. */
  Set<String> present() {
    return with(Known.PRESENT);
  }

  /** The instances whose last write was acknowledged as a removal. */
  Set<String> absent() {
    return with(Known.ABSENT);
  }

  /** The instances whose last write failed: there or not. */
  Set<String> unknown() {
    return with(Known.UNKNOWN);
  }

  private Set<String> with(Known k) {
    Set<String> s = new TreeSet<>();
    known.forEach((a, v) -> {
      if (v == k) {
        s.add(a);
      }
    });
    return s;
  }

  /** Writes acknowledged and failed so far, for the summary. */
  Map<String, Integer> counts() {
    Map<String, Integer> c = new TreeMap<>();
    c.put("acked", acked);
    c.put("failed", failed);
    c.put("removals that found none", notFound);
    return c;
  }

  /** Stops writing (the write under way ends first). */
  void stop() throws InterruptedException {
    running = false;
    thread.join(TimeUnit.SECONDS.toMillis(10));
  }

  @Override
  public void close() throws InterruptedException {
    stop();
    for (ManagedChannel c : channels) {
      c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
