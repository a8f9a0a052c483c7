package io.roster.server.registry;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * Whether this server serves its registry now, and if not, why: the one answer that every port
 * asks (Roster's and Nacos's gRPC services, xDS, DNS, the HTTP routes, gRPC health and the status
 * routes), so that no port serves what another refuses (decision 86).
 *
 * <p>It answers two questions. {@link #refusal()}: may this server's registry be read? Not while
 * a cluster member has not joined the group or has not caught up with its log: its registry is
 * partial, or nobody's. (A stopping server stops each port in its own order; reads end with it.)
 * {@link #notReady()}: is it ready, as health and the status routes say? Not while reads are
 * refused, nor while it cannot take writes (a member cut off from the majority still answers
 * reads, flagged possibly stale, but asks its clients to go elsewhere), nor once it stops.
 *
 * <p>Thread-safe: the cluster layer and the server's stop set it, any thread reads it. Listeners
 * run on the thread that made the change and must not block.
 */
public final class Readiness {

  /** Why reads are refused for the cluster's sake (not joined, catching up), or null. */
  private volatile @Nullable String unservable;
  /** Why this server takes no writes now (a member cut off from the majority), or null. */
  private volatile @Nullable String unwritable;
  /** Why this server stops, once it does. */
  private volatile @Nullable String stopping;
  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

  private Readiness(@Nullable String unservable) {
    this.unservable = unservable;
  }

  /** A server that serves from the start (standalone: its registry is the whole truth). */
  public static Readiness ready() {
    return new Readiness(null);
  }

  /** A server that serves only once told ({@link #serving}): a cluster member, {@code why} until then. */
  public static Readiness notYet(String why) {
    return new Readiness(Objects.requireNonNull(why));
  }

  /**
   * The cluster's say on reads: null once this member's registry is the cluster's (it is in the
   * group and has caught up), else why not.
   */
  public void serving(@Nullable String why) {
    if (!Objects.equals(unservable, why)) {
      unservable = why;
      changed();
    }
  }

  /** Null when this server takes writes, else why not. */
  public void writable(@Nullable String why) {
    if (!Objects.equals(unwritable, why)) {
      unwritable = why;
      changed();
    }
  }

  /** The server stops ({@code why}): from now on it is not ready. */
  public void stopping(String why) {
    if (stopping == null) {
      stopping = Objects.requireNonNull(why);
      changed();
    }
  }

  /**
   * Why this server's registry may not be read now (a cluster member that has not joined, or is
   * catching up), or null when it may.
   */
  public @Nullable String refusal() {
    return unservable;
  }

  /** Why this server is not ready now (stopping, reads refused, or no writes taken), or null when it is. */
  public @Nullable String notReady() {
    String s = stopping;
    if (s != null) {
      return s;
    }
    String r = unservable;
    return r != null ? r : unwritable;
  }

  /** Why this server takes no writes while it serves reads (cut off: its answers may be stale), or null. */
  public @Nullable String unwritable() {
    return unwritable;
  }

  /** {@code listener} runs after each change (on the changing thread). */
  public void onChange(Runnable listener) {
    listeners.add(listener);
  }

  private void changed() {
    listeners.forEach(Runnable::run);
  }

  @Override
  public String toString() {
    String why = notReady();
    return why == null ? "ready" : "not ready: " + why;
  }
}
