package io.roster.it;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * What a test opened (clients, channels, child processes), closed after it in the reverse
 * order, best effort: a member or a process may already be gone, and one failure must not
 * keep the rest open.
 */
final class Closer implements AutoCloseable {

  private final Deque<AutoCloseable> open = new ArrayDeque<>();

  /** Closes {@code c} with the rest; returns it. */
  <T extends AutoCloseable> T add(T c) {
    synchronized (open) {
      open.push(c);
    }
    return c;
  }

  @Override
  public void close() {
    while (true) {
      AutoCloseable c;
      synchronized (open) {
        c = open.poll();
      }
      if (c == null) {
        return;
      }
      try {
        c.close();
      } catch (Exception ignored) {
        // Best effort: the other side may be gone.
      }
    }
  }
}
