package io.roster.client.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * The spent sessions (decision 47): sessions that may still own some of this client's instances
 * on their servers (a move's standby that failed after its redo went out, a silent session given
 * up by the keepalive), kept open without keepalive until a later session's redo has been taken,
 * then given their goodbye. Ending them sooner would remove those instances.
 *
 * <p>Owned by the {@link ConnectionManager}, which hands it to its {@link Mover}. Used only in
 * the client's {@link SerialContext}; not thread-safe.
 */
final class SpentSessions {

  /** At most this many spent sessions are kept open at once. */
  private static final int MAX_SPENT = 2;

  private final List<Session> spent = new ArrayList<>();
  private boolean closed;

  /**
   * Keeps {@code s}, which may own some of this client's instances on its server, open (without
   * keepalive) until a later session's redo has been taken. Bounded: beyond {@link #MAX_SPENT},
   * the oldest gets its goodbye. After {@link #closeAll}, or when {@code s} has ended, the goodbye
   * goes out at once.
   */
  void spend(Session s) {
    if (closed || s.endedFuture().isDone()) {
      s.halfClose();
      return;
    }
    spent.add(s);
    if (spent.size() > MAX_SPENT) {
      spent.remove(0).halfClose(); // bounded: the oldest goes, with whatever it still owns
    }
  }

  /** The spent sessions, which the caller now ends (or spends again). */
  List<Session> takeAll() {
    List<Session> taken = new ArrayList<>(spent);
    spent.clear();
    return taken;
  }

  /** {@code s} ended on its own: nothing left to say goodbye to. */
  void forget(Session s) {
    spent.remove(s);
  }

  /** The client closes: every spent session gets its goodbye now, and every later one at once. */
  void closeAll() {
    closed = true;
    spent.forEach(Session::halfClose);
    spent.clear();
  }
}
