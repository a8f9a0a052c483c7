package io.roster.server.session;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Whether a protocol's new connections are welcome, and the wait for its last one to end once
 * the server stops: the same rules for every protocol (a Roster {@code Connect} stream, a Nacos
 * connection). New connections are refused for now while a cluster member catches up or is cut
 * off ({@link #refuse}), and for good once the server is stopping ({@link #stop}); the stop
 * completes when no connection is left open.
 *
 * <p>Thread-safe. The protocol calls {@link #connectionEnded} whenever one of its connections
 * ends, so that the wait sees the last one go.
 */
public final class Admission {

  private final BooleanSupplier noneOpen;
  /** Why new connections are refused for now (a cluster member catching up or cut off), or null. */
  private volatile @Nullable String refusing;
  /** Why new connections are refused for good (the server is stopping), or null. */
  private volatile @Nullable String stopping;
  /** Completes once the server is stopping and no connection is open. */
  private final CompletableFuture<Void> allEnded = new CompletableFuture<>();

  /** @param noneOpen whether the protocol has no open connection left */
  public Admission(BooleanSupplier noneOpen) {
    this.noneOpen = noneOpen;
  }

  /** Why a new connection is refused now, or null when it is welcome. */
  public @Nullable String refusal() {
    String s = stopping;
    return s != null ? s : refusing;
  }

  /** Refuses new connections for now ({@code reason}), or accepts them again ({@code null}). */
  public void refuse(@Nullable String reason) {
    refusing = reason;
  }

  /** Refuses new connections from now on, for {@code reason}: the server is stopping. */
  public void stop(String reason) {
    stopping = reason;
    connectionEnded();
  }

  /** A connection ended: once stopping with none left, {@link #awaitAllEnded} returns. */
  public void connectionEnded() {
    if (stopping != null && noneOpen.getAsBoolean()) {
      allEnded.complete(null);
    }
  }

  /**
   * Waits until the server is stopping and every connection has ended, or {@code timeout}.
   *
   * @return whether they all ended in time
   */
  public boolean awaitAllEnded(Duration timeout) throws InterruptedException {
    try {
      allEnded.get(Math.max(0, timeout.toNanos()), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      throw new IllegalStateException(e);
    }
  }
}
