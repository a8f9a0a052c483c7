package io.roster.server.http;

import io.roster.server.model.RegistryException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * An HTTP request's wait for its change to be applied here: the one place a change's future
 * becomes an answer or an {@link HttpException}. Stateless; thread-safe; it blocks the calling
 * request thread for at most {@link #TIMEOUT}.
 */
public final class Applied {

  /** How long a request waits for its change before it answers 503. */
  public static final Duration TIMEOUT = Duration.ofSeconds(5);

  private Applied() {}

  /**
   * The change's result; its refusal becomes the status {@code refusal} gives it, a wait past
   * {@link #TIMEOUT} or an interrupt a 503.
   */
  public static <T> T await(CompletableFuture<T> applied, Function<RegistryException, HttpException> refusal) {
    try {
      return applied.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new HttpException(503, "the change was not applied within " + TIMEOUT.toSeconds()
          + " s (a cluster member that cannot reach the log?); try again or another server");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HttpException(503, "interrupted");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      while (cause instanceof CompletionException && cause.getCause() != null) {
        cause = cause.getCause();
      }
      if (cause instanceof RegistryException re) {
        throw refusal.apply(re);
      }
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException(cause);
    }
  }
}
