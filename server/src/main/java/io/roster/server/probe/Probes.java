package io.roster.server.probe;

import io.roster.server.registry.HealthCheck;
import java.util.function.Consumer;

/** Runs one probe of an address; {@link ProbeClient} is the real one. */
public interface Probes {

  /**
   * Probes {@code ip:port} as {@code check} says and reports its outcome to {@code done}, once,
   * within the probe timeout; never blocks.
   */
  void probe(String ip, int port, HealthCheck check, Consumer<Outcome> done);

  /** What one probe found. */
  enum Kind { HEALTHY, UNHEALTHY, SKIPPED }

  /**
   * One probe's outcome.
   *
   * @param detail why it is unhealthy or was skipped ("" when healthy), for the log line of a flip
   */
  record Outcome(Kind kind, String detail) {
    public static final Outcome HEALTHY = new Outcome(Kind.HEALTHY, "");

    public static Outcome unhealthy(String detail) {
      return new Outcome(Kind.UNHEALTHY, detail);
    }

    public static Outcome skipped(String detail) {
      return new Outcome(Kind.SKIPPED, detail);
    }
  }
}
