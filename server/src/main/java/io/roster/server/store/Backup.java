package io.roster.server.store;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.roster.proto.cluster.v1.Fact;
import io.roster.server.codec.ValueCodec;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Names;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Claim;
import io.roster.server.registry.Command;
import io.roster.server.registry.Registry;
import io.roster.server.registry.ServiceSettings;
import io.roster.server.registry.Writer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A backup of a server's durable state, and its restore (docs/persistence.md, "Backup and
 * restore"; decision 75): the service settings, persistent instances and operator holds a
 * registry holds, as {@link Fact}s in JSON. A backup reads the registry one service at a time,
 * each service as of one moment; a restore submits the facts to a {@link Writer} (the log, in a
 * cluster), so every member gets them. Stateless.
 */
public final class Backup {

  /** The backup format this code writes; it reads this one and older. */
  public static final int FORMAT = 1;
  /** Restore commands in flight at once. */
  private static final int IN_FLIGHT = 128;

  private Backup() {}

  /** What a registry holds of durable state, as a backup taken at {@code wallMillis} from {@code source}. */
  public static io.roster.proto.cluster.v1.Backup take(Registry registry, String source, long wallMillis) {
    io.roster.proto.cluster.v1.Backup.Builder b = io.roster.proto.cluster.v1.Backup.newBuilder().setFormat(FORMAT)
        .setTakenAt(Instant.ofEpochMilli(wallMillis).truncatedTo(ChronoUnit.MILLIS).toString()).setSource(source);
    Registry.Image image = registry.image();
    image.settings().entrySet().stream().sorted(Map.Entry.comparingByKey())
        .forEach(e -> b.addFacts(StateStore.settingsFact(e.getKey(), e.getValue())));
    List<Fact> holds = new ArrayList<>();
    for (Registry.ServiceImage s : image.services()) {
      for (Registry.Held h : s.registrations()) {
        InstanceKey key = h.instance().key();
        if (h.owner().kind() == Owner.Kind.PERSISTENT) {
          b.addFacts(Fact.newBuilder().setPersistent(StateStore.persistentFact(s.service(), key,
              new StateStore.Stored(h.instance(), h.claim().identity()))));
        }
        if (h.operatorHeld()) {
          holds.add(StateStore.holdFact(new StateStore.InstanceRef(s.service(), key), true));
        }
      }
    }
    return b.addAllFacts(holds).build();
  }

  /** {@code backup} as the JSON GET /roster/v1/admin/backup answers. */
  public static String json(io.roster.proto.cluster.v1.Backup backup) {
    try {
      return JsonFormat.printer().print(backup);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("a backup prints as JSON", e);
    }
  }

  /**
   * Reads a backup file; throws {@link DataDir.Refused} naming the file and what is wrong when it
   * is not one, or of a newer format.
   */
  public static io.roster.proto.cluster.v1.Backup read(Path file) throws IOException {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new DataDir.Refused("--restore: cannot read " + file + " (" + e.getMessage() + ")");
    }
    io.roster.proto.cluster.v1.Backup.Builder b = io.roster.proto.cluster.v1.Backup.newBuilder();
    try {
      JsonFormat.parser().merge(text, b);
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      throw new DataDir.Refused("--restore: " + file + " is not a Roster backup (" + e.getMessage() + "); take one "
          + "with GET /roster/v1/admin/backup");
    }
    if (b.getFormat() < 1 || b.getFormat() > FORMAT) {
      throw new DataDir.Refused("--restore: " + file + " is a backup in format " + b.getFormat() + ", and this "
          + "Roster reads formats 1.." + FORMAT + ": restore it with a Roster at least as new as the one that took it");
    }
    // Every fact must make sense before anything is restored: a bad one refuses the whole file.
    for (int i = 0; i < b.getFactsCount(); i++) {
      try {
        command(b.getFacts(i));
      } catch (RuntimeException e) {
        throw new DataDir.Refused("--restore: " + file + ": fact " + (i + 1) + " is invalid (" + e.getMessage() + ")");
      }
    }
    return b.build();
  }

  /** What a restore did. */
  public record Restored(int settings, int persistent, int holds, int holdsWithoutInstance) {}

  /**
   * Submits every fact of {@code backup} to {@code writer} (settings, then persistent instances,
   * then holds, as the backup lists them), {@value #IN_FLIGHT} at a time; waits for each.
   * A hold of an instance that is not registered is counted and dropped: holds live as long as
   * their instance (decision 40).
   *
   * @throws IOException when a change is refused or cannot be committed within {@code timeout}
   */
  public static Restored restore(io.roster.proto.cluster.v1.Backup backup, Writer writer, long timeoutMs)
      throws IOException {
    int settings = 0;
    int persistent = 0;
    int holds = 0;
    Semaphore window = new Semaphore(IN_FLIGHT);
    AtomicReference<Throwable> failed = new AtomicReference<>();
    List<CompletableFuture<?>> holdResults = new ArrayList<>();
    for (Fact f : backup.getFactsList()) {
      if (failed.get() != null) {
        break;
      }
      Command<?> c = command(f);
      if (c == null) {
        continue;
      }
      try {
        if (!window.tryAcquire(timeoutMs, TimeUnit.MILLISECONDS)) {
          throw new IOException("restore: no answer from the writer within " + timeoutMs + " ms");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("restore interrupted", e);
      }
      CompletableFuture<?> result;
      try {
        result = writer.submit(c);
      } catch (RuntimeException e) {
        window.release();
        throw new IOException("restore: " + e.getMessage(), e);
      }
      result.whenComplete((r, e) -> {
        if (e != null) {
          failed.compareAndSet(null, e);
        }
        window.release();
      });
      if (f.hasSettings()) {
        settings++;
      } else if (f.hasPersistent()) {
        persistent++;
      } else {
        holds++;
        holdResults.add(result);
      }
    }
    try {
      if (!window.tryAcquire(IN_FLIGHT, timeoutMs, TimeUnit.MILLISECONDS)) {
        throw new IOException("restore: no answer from the writer within " + timeoutMs + " ms");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("restore interrupted", e);
    }
    if (failed.get() != null) {
      throw new IOException("restore: a change was refused: " + failed.get().getMessage(), failed.get());
    }
    int absent = 0;
    for (CompletableFuture<?> h : holdResults) {
      try {
        absent += h.get(timeoutMs, TimeUnit.MILLISECONDS) == null ? 1 : 0;
      } catch (ExecutionException | TimeoutException e) {
        throw new IOException("restore: " + e.getMessage(), e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("restore interrupted", e);
      }
    }
    return new Restored(settings, persistent, holds - absent, absent);
  }

  /** Whether {@code registry} holds durable state of its own: a restore goes only into one that holds none. */
  public static boolean holdsDurableState(Registry registry) {
    return registry.settingsBytes() > 0 || !registry.servicesOf(Owner.PERSISTENT).isEmpty();
  }

  /**
   * Refuses a persistent instance stored under a key that is not its own: restored, it would be
   * registered under the instance's address while its holds and removals name the key.
   */
  private static void checkKey(ServiceKey service, InstanceKey key, Instance instance) {
    InstanceKey own = instance.key();
    String cluster = key.cluster().isEmpty() ? Names.DEFAULT_CLUSTER : key.cluster();
    List<String> differ = new ArrayList<>();
    if (!key.ip().equals(own.ip())) {
      differ.add("key.ip \"" + key.ip() + "\" but instance.ip \"" + own.ip() + "\"");
    }
    if (key.port() != own.port()) {
      differ.add("key.port " + key.port() + " but instance.port " + own.port());
    }
    if (!cluster.equals(own.cluster())) {
      differ.add("key.cluster \"" + key.cluster() + "\" but instance.cluster \"" + own.cluster() + "\"");
    }
    if (!differ.isEmpty()) {
      throw new IllegalArgumentException("the persistent instance of service " + service + " under key " + key.ip()
          + ":" + key.port() + " (cluster " + key.cluster() + ") is not that instance: " + String.join(", ", differ));
    }
  }

  /** The command that restores {@code f}; null for a fact that restores nothing (a removal). */
  private static io.roster.server.registry.@org.jspecify.annotations.Nullable Command<?> command(Fact f) {
    if (f.hasSettings()) {
      ServiceSettings s = ValueCodec.settings(f.getSettings());
      return new Command.UpdateSettings(ValueCodec.service(f.getSettings().getService()), s.protectThreshold(), true,
          s.metadata(), s.checks());
    }
    if (f.hasPersistent()) {
      if (!f.getPersistent().hasInstance()) {
        return null;
      }
      ServiceKey service = ValueCodec.service(f.getPersistent().getService());
      Instance instance = ValueCodec.instance(f.getPersistent().getInstance());
      checkKey(service, ValueCodec.key(f.getPersistent().getKey()), instance);
      return new Command.Register(Owner.PERSISTENT, service, instance,
          new Claim("", 0, f.getPersistent().getIdentity(), true));
    }
    if (f.hasHold() && f.getHold().getHeld()) {
      return new Command.UpdateInstance(ValueCodec.service(f.getHold().getService()), ValueCodec.key(f.getHold().getKey()),
          false, null, null, false, Map.of(), true);
    }
    return null;
  }
}
