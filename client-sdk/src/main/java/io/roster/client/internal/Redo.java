package io.roster.client.internal;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The redo after a welcome, and what follows its answers: the {@link ConnectionManager.Handler}
 * registers and subscribes everything again on the new session; once the server has answered
 * it, the spent sessions get their goodbye and the back-off starts over, or, when the server
 * could not take it, the spent sessions are kept and the client moves elsewhere. Owned by the
 * {@link ConnectLoop}; its log lines come from the connection manager's logger. Used only in the
 * client's {@link SerialContext}, to which the answers come back.
 */
final class Redo {

  private static final Logger log = LoggerFactory.getLogger(ConnectionManager.class);

  private final ConnectionManager.Handler handler;
  private final SerialContext context;
  private final SpentSessions spent;
  private final Backoff backoff;
  private final Predicate<Session> activeCurrent;
  private final BiConsumer<Session, String> moveAway;

  /**
   * @param activeCurrent in the context: whether a session is the current one and active
   * @param moveAway moves the client away from a session whose server refused a change
   */
  Redo(ConnectionManager.Handler handler, SerialContext context, SpentSessions spent, Backoff backoff,
      Predicate<Session> activeCurrent, BiConsumer<Session, String> moveAway) {
    this.handler = handler;
    this.context = context;
    this.spent = spent;
    this.backoff = backoff;
    this.activeCurrent = activeCurrent;
    this.moveAway = moveAway;
  }

  /**
   * In the context: sends the redo on the welcomed session {@code s} and returns the results of
   * its requests; none when it failed (logged: it continues on the next connection).
   */
  List<CompletableFuture<Answer>> send(Session s, boolean seamless) {
    try {
      return handler.onWelcome(s, seamless);
    } catch (RuntimeException e) {
      log.warn("Redo on {} failed; it continues on the next connection", s.address, e);
      return List.of();
    }
  }

  /**
   * In the context: once the redo just sent on the active session {@code s} is answered, the
   * spent sessions get their goodbye, and, if the server took it, the back-off starts over (a
   * server that welcomes the client but refuses its redo, a cluster member whose log commits
   * nothing, sends it elsewhere with a growing delay, not every initial back-off step). A redo
   * the server could not take (a member that cannot write) is redone elsewhere.
   */
  void follow(Session s, List<CompletableFuture<Answer>> redo) {
    List<Session> leaving = spent.takeAll();
    CompletableFuture.allOf(redo.toArray(CompletableFuture[]::new)).whenComplete((done, error) -> {
      boolean taken = error == null
          && redo.stream().noneMatch(f -> f.join().unavailable());
      context.execute(() -> {
        if (!taken) {
          // This server holds nothing yet: the spent sessions may still hold the instances.
          leaving.forEach(spent::spend);
          return;
        }
        if (activeCurrent.test(s)) {
          backoff.reset();
        }
        leaving.forEach(Session::halfClose);
      });
    });
    for (CompletableFuture<Answer> f : redo) {
      f.thenAccept(r -> {
        if (r.unavailable()) {
          moveAway.accept(s, "it could not take the redo: " + r.message());
        }
      });
    }
  }
}
