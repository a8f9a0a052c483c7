package io.roster.client.internal;

import io.roster.client.RosterException;
import io.roster.client.RosterException.Code;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waiting for session requests, shared by the parts of the client that send them
 * ({@link DesiredState}, {@link Queries}). Stateless; any thread (blocking calls only on a
 * caller's thread, never on a transport thread).
 */
final class Requests {

  private static final Logger log = LoggerFactory.getLogger(DefaultRosterClient.class);

  private Requests() {}

  /**
   * Waits for the answer to a session request. Returns null when the session ended first (the
   * caller retries on the next one or falls back); throws {@code onTimeout}'s exception when no
   * answer came within {@code wait}.
   */
  static @Nullable Answer awaitAnswer(CompletableFuture<Answer> future, Duration wait, String what,
      Supplier<RosterException> onTimeout) {
    try {
      return future.get(wait.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof Session.SessionLostException) {
        return null;
      }
      if (cause instanceof TimeoutException) {
        throw onTimeout.get();
      }
      throw ProtoMapper.toException(cause, what);
    } catch (TimeoutException e) {
      throw onTimeout.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RosterException(Code.UNAVAILABLE, "interrupted while waiting to " + what);
    }
  }

  /** Logs the outcome of a request nobody waits for (redo, unsubscribe). */
  static void logBackground(String what, Answer answer, Throwable error) {
    if (error != null) {
      log.debug("{} got no answer: {}", what, ProtoMapper.unwrap(error).toString());
    } else if (!answer.ok()) {
      log.warn("{} was rejected by the server: {} {}", what, answer.wireCode(),
          answer.message());
    }
  }

}
