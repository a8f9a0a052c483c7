package io.roster.client.internal;

/** A source of monotonic nanoseconds, injectable so tests can run on a fake clock. */
@FunctionalInterface
interface Ticker {

  /**
   * Returns the current reading.
   *
   * @return nanoseconds from an arbitrary origin; only differences mean anything
   */
  long nanoTime();

  /**
   * The wall clock, in milliseconds since the epoch: what outlives the process (a session's
   * sequence number grows across restarts of a client). The system's unless a test's ticker
   * says otherwise.
   */
  default long currentTimeMillis() {
    return System.currentTimeMillis();
  }

  /**
   * Returns the system ticker.
   *
   * @return a ticker reading {@link System#nanoTime()}
   */
  static Ticker system() {
    return System::nanoTime;
  }
}
