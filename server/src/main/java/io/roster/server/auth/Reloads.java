package io.roster.server.auth;

import java.util.concurrent.atomic.LongAdder;

/**
 * What the checks of the auth file found since start ({@code roster_auth_reload_total} and {@code
 * roster_auth_reload_last_success_timestamp_seconds}): the file taken again after a change, the
 * file unusable (unreadable, or changed into an invalid auth file: counted at every check while it
 * stays so), and when the file in use was read. Written by {@link Authenticator}'s checks, read by
 * any thread.
 */
public final class Reloads {

  private final LongAdder ok = new LongAdder();
  private final LongAdder failed = new LongAdder();
  private volatile long loadedMillis = -1;

  Reloads() {}

  /** The file was read at start, at {@code millis} (wall clock). */
  void loaded(long millis) {
    loadedMillis = millis;
  }

  /** A changed file was taken at {@code millis} (wall clock). */
  void reloaded(long millis) {
    ok.increment();
    loadedMillis = millis;
  }

  /** A check found the file unreadable, or changed and invalid; the last good file stays. */
  void refused() {
    failed.increment();
  }

  /** Changed files taken since start. */
  public long ok() {
    return ok.sum();
  }

  /** Checks since start that found the file unreadable or invalid. */
  public long errors() {
    return failed.sum();
  }

  /** When (wall clock, ms) the file in use was read, at start or by the last good reload; -1 with auth off. */
  public long loadedMillis() {
    return loadedMillis;
  }
}
