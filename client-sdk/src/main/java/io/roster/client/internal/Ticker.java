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
   * Returns the system ticker.
   *
   * @return a ticker reading {@link System#nanoTime()}
   */
  static Ticker system() {
    return System::nanoTime;
  }
}
