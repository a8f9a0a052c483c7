package io.roster.server;

import io.roster.server.cluster.ClusterNode;
import io.roster.server.config.ServerConfig;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import io.roster.server.store.Backup;
import io.roster.server.store.DataDir;
import io.roster.server.store.DurableWriter;
import io.roster.server.store.StateStore;
import io.roster.server.time.Scheduler;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Durability at start: the data directory opened, a standalone server's state store read back
 * into the registry, and {@code --restore}'s backup read (before anything else) and restored into
 * a registry that holds no durable state yet. Stateless; the server's wiring calls it on the
 * starting thread (a cluster member's restore: on a thread of its own).
 */
final class Durability {

  private static final Logger log = LoggerFactory.getLogger(Durability.class);
  /** How long a restore waits for one change to be applied. */
  static final Duration RESTORE_TIMEOUT = Duration.ofSeconds(60);
  /** Journal facts after which a standalone server rewrites its state file. */
  static final int STATE_COMPACT_AFTER = 10_000;

  private Durability() {}

  static io.roster.proto.cluster.v1.@Nullable Backup readBackup(ServerConfig config) {
    Path file = config.restore();
    if (file == null) {
      return null;
    }
    try {
      return Backup.read(file);
    } catch (IOException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /**
   * Restores {@code --restore}'s backup into a registry that holds no durable state yet
   * (standalone: before the port opens; a cluster member: once it has caught up, on a thread of
   * its own, through the log; {@code clustered} says which). One that holds some keeps it, with a WARN.
   */
  /** Closes the state store and the data directory (their lock), at the server's stop. */
  static void close(@Nullable DurableWriter durable, @Nullable DataDir dataDir) {
    try {
      if (durable != null) {
        durable.close();
      }
      if (dataDir != null) {
        dataDir.close();
      }
    } catch (IOException e) {
      log.warn("Closing the data directory", e);
    }
  }

  /** How often holds ended by departures are written down. */
  private static final Duration FLUSH_EVERY = Duration.ofSeconds(1);

  /** Writes down the holds that departures ended, every {@link #FLUSH_EVERY}, until {@code closed}. */
  static void flushHeldEnds(Scheduler scheduler, DurableWriter d, BooleanSupplier closed) {
    scheduler.schedule(() -> {
      if (!closed.getAsBoolean()) {
        d.flush();
        flushHeldEnds(scheduler, d, closed);
      }
    }, FLUSH_EVERY);
  }

  /**
   * A member's restore, on a thread of its own: once the member has caught up with the log and
   * takes writes, the backup goes through the log as any write does.
   */
  static void restoreThroughLog(ClusterNode node, CompletableFuture<Void> firstWritable,
      io.roster.proto.cluster.v1.Backup b, Writer writer, Registry registry, Path file) {
    Thread t = new Thread(() -> {
      node.caughtUp().join();
      firstWritable.join();
      restore(b, writer, registry, file, true);
    }, "roster-restore");
    t.setDaemon(true);
    t.start();
  }

  static void restore(io.roster.proto.cluster.v1.Backup b, Writer writer, Registry registry, Path file,
      boolean clustered) {
    if (Backup.holdsDurableState(registry)) {
      log.warn("--restore {}: not applied: this {} already holds durable state (service settings or persistent "
          + "instances); a backup is restored only into an empty one", file, clustered ? "cluster" : "server");
      return;
    }
    try {
      Backup.Restored r = Backup.restore(b, writer, RESTORE_TIMEOUT.toMillis());
      log.info("Restored {} (taken {} from {}): {} service settings, {} persistent instances, {} holds{}", file,
          b.getTakenAt(), b.getSource(), r.settings(), r.persistent(), r.holds(), r.holdsWithoutInstance() == 0 ? ""
              : "; " + r.holdsWithoutInstance() + " holds of instances not registered now were dropped");
    } catch (IOException e) {
      log.error("--restore {}: stopped part way: {}. What was restored stays; restoring the same backup again "
          + "into an emptied data directory starts over", file, e.getMessage());
    }
  }

  static @Nullable DataDir openDataDir(ServerConfig config) {
    if (config.dataDir() == null) {
      return null;
    }
    try {
      return DataDir.open(config.dataDir());
    } catch (IOException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /** A standalone server's durable state, read back into {@code registry}; its writer. */
  static DurableWriter openStandalone(DataDir dir, Registry registry) {
    StateStore store;
    try {
      store = StateStore.open(dir.standalone(), STATE_COMPACT_AFTER);
    } catch (IOException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
    StateStore.State state = store.state();
    DurableWriter writer = new DurableWriter(registry, store);
    DurableWriter.load(registry, state);
    registry.onHoldEnded(writer);
    if (!state.settings().isEmpty() || !state.holds().isEmpty()) {
      log.info("Read back from {}: settings of {} services, {} operator holds", store, state.settings().size(),
          state.holds().size());
    }
    return writer;
  }
}
