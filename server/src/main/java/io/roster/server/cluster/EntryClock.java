package io.roster.server.cluster;

import java.util.function.LongSupplier;

/**
 * The registry's clock on a cluster member: the time carried by the log entry being applied
 * (0 before the first). Revisions computed from it are the same on every member.
 */
public final class EntryClock implements LongSupplier {

  private volatile long micros;

  void set(long micros) {
    this.micros = micros;
  }

  @Override
  public long getAsLong() {
    return micros;
  }
}
