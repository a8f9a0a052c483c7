package io.roster.server.registry;

/**
 * What one service may hold, enforced when instances are registered or changed: a change that
 * would cross a limit is refused with RESOURCE_EXHAUSTED and changes nothing.
 *
 * <p>The byte limit bounds every message that carries a service's whole state (a full push, a
 * {@code QueryInstances} answer, a Watch message): it is counted over every registered
 * instance, disabled ones included, in wire bytes ({@link io.roster.server.model.WireSize}),
 * so any view of the service is at most this big plus a small header. Keep it under the
 * smallest message limit of the clients (gRPC's default is 4 MiB) with headroom.
 *
 * @param maxInstances instances one service may have (every owner together)
 * @param maxBytes wire bytes of one service's instances
 */
public record ServiceLimits(int maxInstances, long maxBytes) {

  /** 20,000 instances and 3 MiB: see docs/decisions.md, record 21. */
  public static final ServiceLimits DEFAULT = new ServiceLimits(20_000, 3L * 1024 * 1024);

  public ServiceLimits {
    if (maxInstances < 1) {
      throw new IllegalArgumentException("maxInstances: " + maxInstances + " (expected: >= 1)");
    }
    if (maxBytes < 1) {
      throw new IllegalArgumentException("maxBytes: " + maxBytes + " (expected: >= 1)");
    }
  }
}
