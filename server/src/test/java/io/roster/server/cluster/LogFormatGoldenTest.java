package io.roster.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.proto.cluster.v1.Batch;
import io.roster.proto.cluster.v1.EndStaleOwners;
import io.roster.proto.cluster.v1.MemberDown;
import io.roster.proto.cluster.v1.MemberLoad;
import io.roster.proto.cluster.v1.MemberStarted;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Claim;
import io.roster.server.registry.Command;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.Namespace;
import io.roster.server.registry.Registry;
import io.roster.server.registry.ServiceSettings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A member's durable data keeps reading: log entries and snapshots written by every format
 * version Roster has had are checked in under {@code src/test/resources/golden/} and must decode
 * to the same values. A change to log.proto that breaks an old file fails here.
 *
 * <p>Files are added, never rewritten: when the format gains a version, {@link #main} writes that
 * version's files next to the old ones (run it from the server module's directory with the
 * version as argument), and a test for them is added here.
 */
class LogFormatGoldenTest {

  static final ServiceKey ORDERS = ServiceKey.of("public", "DEFAULT_GROUP", "orders");
  static final ServiceKey USERS = ServiceKey.of("tenant-a", "blue", "users");
  static final Owner SESSION = new Owner("n1@k9x2", Owner.Kind.SESSION, "mx1-7");
  static final Owner NACOS = new Owner("n2@k9x3", Owner.Kind.NACOS, "mx2-1");
  static final Owner LEASE = new Owner("n3@k9x4", Owner.Kind.LEASE, "10.0.0.9#8080#DEFAULT");
  static final Instance A = new Instance("10.0.0.1", 8080, 2.5, true, false, true, "east",
      Map.of("zone", "a", "version", "1.4"), "");
  static final Instance B = new Instance("10.0.0.2", 8080, 1.0, true, true, true, "DEFAULT", Map.of(), "");

  /** Every registry command kind, and every membership command kind, in one batch. */
  static Batch batch() {
    return batch(registryCommands());
  }

  /** Format 2: the same, and registrations that carry the registering identity (auth on). */
  static Batch batchV2() {
    return batch(registryCommandsV2());
  }

  static List<Command<?>> registryCommandsV2() {
    List<Command<?>> c = new ArrayList<>(registryCommands());
    c.add(new Command.Register(SESSION, ORDERS, B, new Claim("client-2", 3, "deployer", false)));
    c.add(new Command.ReplaceOwned(NACOS, USERS, List.of(B), new Claim("client-3", 4, "ops", true)));
    return c;
  }

  /** Format 3: the same, and a persistent instance registered and deregistered (no owner). */
  static Batch batchV3() {
    List<Command<?>> c = new ArrayList<>(registryCommandsV2());
    c.addAll(persistentCommands());
    return batch(c);
  }

  static final Instance P = new Instance("10.0.0.7", 5432, 1.0, true, true, false, "DEFAULT", Map.of("db", "main"), "");

  /**
   * As an admin (or anyone with auth off) writes them. Before format 5 a removal carried no
   * identity, and every persistent registration and removal applies as an admin's.
   */
  static List<Command<?>> persistentCommands() {
    return List.of(new Command.Register(Owner.PERSISTENT, ORDERS, P, new Claim("", 0, "dba", true)),
        new Command.Deregister(Owner.PERSISTENT, ORDERS, P.key(), new Claim("", 0, "", true)));
  }

  /** Format 5: the same, and a persistent instance registered and removed by an identity that is no admin. */
  static Batch batchV5() {
    List<Command<?>> c = new ArrayList<>(registryCommandsV2());
    c.addAll(persistentCommands());
    c.addAll(checkCommands());
    c.addAll(persistentCommandsV5());
    return batch(c);
  }

  /** Format 6: the same, and namespaces created, edited and deleted (decision 97). */
  static Batch batchV6() {
    List<Command<?>> c = new ArrayList<>(registryCommandsV2());
    c.addAll(persistentCommands());
    c.addAll(checkCommands());
    c.addAll(persistentCommandsV5());
    c.addAll(namespaceCommands());
    return batch(c);
  }

  static final Namespace TENANT_A = new Namespace("tenant-a", "Tenant A", "the first tenant");

  static List<Command<?>> namespaceCommands() {
    return List.of(new Command.PutNamespace(TENANT_A, true),
        new Command.PutNamespace(new Namespace("tenant-a", "Tenant A (EU)", ""), false),
        new Command.DeleteNamespace("tenant-a"));
  }

  /** Format 6: the image of format 4, and a created namespace. */
  static Registry.Image imageV6() {
    Registry.Image v4 = imageV4();
    return new Registry.Image(v4.lastRevision(), v4.absentRevision(), v4.services(), v4.settings(), List.of(TENANT_A));
  }

  static List<Command<?>> persistentCommandsV5() {
    return List.of(new Command.Register(Owner.PERSISTENT, ORDERS, P, new Claim("", 0, "app-a", false)),
        new Command.Deregister(Owner.PERSISTENT, ORDERS, P.key(), new Claim("", 0, "app-a", false)));
  }

  static Registry.Image imageV3() {
    return new Registry.Image(1_764_900_000_200_000L, 1_764_900_000_100_000L,
        List.of(new Registry.ServiceImage(USERS, 1_764_900_000_150_000L, List.of(
            new Registry.Held(Owner.PERSISTENT, P.withId(USERS), new Claim("", 0, "dba", false), true)))),
        Map.of(USERS, new ServiceSettings(0.4, Map.of("owner", "team-a"))), List.of());
  }

  /** Format 4: the same, and health checks set on a service's clusters. */
  static Batch batchV4() {
    List<Command<?>> c = new ArrayList<>(registryCommandsV2());
    c.addAll(persistentCommands());
    c.addAll(checkCommands());
    return batch(c);
  }

  static final Map<String, HealthCheck> CHECKS = Map.of(
      "DEFAULT", HealthCheck.http(8081, "/health?deep=1", 204, Map.of("X-Probe", "roster")),
      "manual", HealthCheck.NONE, "replica", HealthCheck.tcp(6543));

  static List<Command<?>> checkCommands() {
    return List.of(new Command.UpdateSettings(ORDERS, null, false, Map.of(), CHECKS));
  }

  static Registry.Image imageV4() {
    return new Registry.Image(1_764_900_000_200_000L, 1_764_900_000_100_000L,
        List.of(new Registry.ServiceImage(USERS, 1_764_900_000_150_000L, List.of(
            new Registry.Held(Owner.PERSISTENT, P.withId(USERS), new Claim("", 0, "dba", false), true)))),
        Map.of(USERS, new ServiceSettings(0.4, Map.of("owner", "team-a"), CHECKS)), List.of());
  }

  static Registry.Image imageV2() {
    return new Registry.Image(1_764_900_000_200_000L, 1_764_900_000_100_000L,
        List.of(new Registry.ServiceImage(ORDERS, 1_764_900_000_150_000L, List.of(
            new Registry.Held(SESSION, A.withId(ORDERS), new Claim("client-1", 7, "deployer", false), false),
            new Registry.Held(LEASE, B.withId(ORDERS), Claim.NONE, true)))),
        Map.of(USERS, new ServiceSettings(0.4, Map.of("owner", "team-a"))), List.of());
  }

  private static Batch batch(List<Command<?>> registry) {
    Batch.Builder b = Batch.newBuilder().setOrigin("n1").setSequence(42).setIncarnation("k9x2")
        .setTimeMicros(1_764_900_000_123_456L);
    registry.forEach(c -> b.addCommands(LogCodec.encode(c)));
    b.addCommands(io.roster.proto.cluster.v1.Command.newBuilder().setMemberStarted(MemberStarted.newBuilder()
        .setMember("n2").setIncarnation("k9x3").setClientAddress("127.0.0.2:9858")));
    b.addCommands(io.roster.proto.cluster.v1.Command.newBuilder().setMemberDown(MemberDown.newBuilder().setMember("n3")));
    b.addCommands(io.roster.proto.cluster.v1.Command.newBuilder().setMemberLoad(MemberLoad.newBuilder()
        .setMember("n1").setSessions(17)));
    b.addCommands(io.roster.proto.cluster.v1.Command.newBuilder().setEndStaleOwners(EndStaleOwners.newBuilder()
        .setMember("n3").setKeepIncarnation("k9x5")));
    return b.build();
  }

  static List<Command<?>> registryCommands() {
    List<Command<?>> c = new ArrayList<>();
    c.add(new Command.Register(SESSION, ORDERS, A, new Claim("client-1", 1_764_900_000_000_001L)));
    c.add(new Command.Deregister(SESSION, ORDERS, A.key()));
    c.add(new Command.ReplaceOwned(NACOS, USERS, List.of(A, B), Claim.NONE));
    c.add(new Command.RemoveOwned(NACOS, USERS));
    c.add(new Command.RemoveOwner(LEASE));
    c.add(new Command.UpdateInstance(ORDERS, new InstanceKey("10.0.0.2", 8080, "DEFAULT"), false, 3.0, null, true,
        Map.of("k", "v"), true));
    c.add(new Command.UpdateSettings(USERS, 0.4, false, Map.of("owner", "team-a")));
    return c;
  }

  static Registry.Image image() {
    return new Registry.Image(1_764_900_000_200_000L, 1_764_900_000_100_000L,
        List.of(new Registry.ServiceImage(ORDERS, 1_764_900_000_150_000L, List.of(
            new Registry.Held(SESSION, A.withId(ORDERS), new Claim("client-1", 7), false),
            new Registry.Held(LEASE, B.withId(ORDERS), Claim.NONE, true)))),
        Map.of(USERS, new ServiceSettings(0.4, Map.of("owner", "team-a"))), List.of());
  }

  static List<RegistryStateMachine.Member> members() {
    return List.of(new RegistryStateMachine.Member("n1", "k9x2", "127.0.0.1:9848", false, 17),
        new RegistryStateMachine.Member("n3", "k9x4", "127.0.0.3:9868", true, 0));
  }

  @Test
  void aLogEntryOfFormatOneReadsAsWritten() throws IOException {
    Batch read = Batch.parseFrom(golden("log-entry-v1.bin"));
    int format = 1;
    assertThat(read.getOrigin()).isEqualTo("n1");
    assertThat(read.getSequence()).isEqualTo(42);
    assertThat(read.getIncarnation()).isEqualTo("k9x2");
    assertThat(read.getTimeMicros()).isEqualTo(1_764_900_000_123_456L);
    List<Command<?>> decoded = decoded(read, format);
    assertThat(decoded).isEqualTo(registryCommands());
    assertThat(read.getCommandsList().subList(decoded.size(), read.getCommandsCount()))
        .isEqualTo(batch().getCommandsList().subList(decoded.size(), batch().getCommandsCount()));
  }

  @Test
  void aSnapshotOfFormatOneReadsAsWritten() throws IOException {
    SnapshotCodec.Loaded loaded;
    try (InputStream in = Files.newInputStream(path("snapshot-v1.bin"))) {
      loaded = SnapshotCodec.read(in, "snapshot-v1.bin");
    }
    assertThat(loaded.image()).isEqualTo(image());
    assertThat(loaded.members()).isEqualTo(members());
    assertThat(loaded.stale()).containsExactly("n3");
  }

  @Test
  void aLogEntryOfFormatTwoReadsAsWrittenIdentitiesIncluded() throws IOException {
    Batch read = Batch.parseFrom(golden("log-entry-v2.bin"));
    int format = 2;
    List<Command<?>> decoded = decoded(read, format);
    assertThat(decoded).isEqualTo(registryCommandsV2());
  }

  @Test
  void aSnapshotOfFormatTwoReadsAsWrittenIdentitiesIncluded() throws IOException {
    SnapshotCodec.Loaded loaded;
    try (InputStream in = Files.newInputStream(path("snapshot-v2.bin"))) {
      loaded = SnapshotCodec.read(in, "snapshot-v2.bin");
    }
    assertThat(loaded.image()).isEqualTo(imageV2());
  }

  @Test
  void aLogEntryOfFormatThreeReadsAsWrittenPersistentInstancesIncluded() throws IOException {
    Batch read = Batch.parseFrom(golden("log-entry-v3.bin"));
    int format = 3;
    List<Command<?>> decoded = decoded(read, format);
    List<Command<?>> expected = new ArrayList<>(registryCommandsV2());
    expected.addAll(persistentCommands());
    assertThat(decoded).isEqualTo(expected);
  }

  @Test
  void aSnapshotOfFormatThreeReadsAsWrittenPersistentInstancesIncluded() throws IOException {
    SnapshotCodec.Loaded loaded;
    try (InputStream in = Files.newInputStream(path("snapshot-v3.bin"))) {
      loaded = SnapshotCodec.read(in, "snapshot-v3.bin");
    }
    assertThat(loaded.image()).isEqualTo(imageV3());
  }

  @Test
  void aLogEntryOfFormatFourReadsAsWrittenHealthChecksIncluded() throws IOException {
    Batch read = Batch.parseFrom(golden("log-entry-v4.bin"));
    int format = 4;
    List<Command<?>> decoded = decoded(read, format);
    List<Command<?>> expected = new ArrayList<>(registryCommandsV2());
    expected.addAll(persistentCommands());
    expected.addAll(checkCommands());
    assertThat(decoded).isEqualTo(expected);
  }

  @Test
  void aLogEntryOfFormatFiveReadsAsWrittenIdentitiesOfPersistentInstancesIncluded() throws IOException {
    Batch read = Batch.parseFrom(golden("log-entry-v5.bin"));
    List<Command<?>> decoded = decoded(read, 5);
    List<Command<?>> expected = new ArrayList<>(registryCommandsV2());
    expected.addAll(persistentCommands());
    expected.addAll(checkCommands());
    expected.addAll(persistentCommandsV5());
    assertThat(decoded).isEqualTo(expected);
  }

  @Test
  void aLogEntryOfFormatSixReadsAsWrittenNamespacesIncluded() throws IOException {
    Batch read = Batch.parseFrom(golden("log-entry-v6.bin"));
    List<Command<?>> decoded = decoded(read, 6);
    List<Command<?>> expected = new ArrayList<>(registryCommandsV2());
    expected.addAll(persistentCommands());
    expected.addAll(checkCommands());
    expected.addAll(persistentCommandsV5());
    expected.addAll(namespaceCommands());
    assertThat(decoded).isEqualTo(expected);
  }

  @Test
  void aSnapshotOfFormatSixReadsAsWrittenNamespacesIncluded() throws IOException {
    SnapshotCodec.Loaded loaded;
    try (InputStream in = Files.newInputStream(path("snapshot-v6.bin"))) {
      loaded = SnapshotCodec.read(in, "snapshot-v6.bin");
    }
    assertThat(loaded.image()).isEqualTo(imageV6());
  }

  /**
   * An entry written before format 5 applies as the members that wrote it applied it: there, a
   * persistent instance could be replaced or removed by another identity, and a member of this
   * build must end up with the same registry as they did.
   */
  @Test
  void persistentRegistrationsAndRemovalsOfAnOlderFormatApplyAsAnAdminsWhateverTheirIdentity() {
    var register = LogCodec.encode(persistentCommandsV5().get(0));
    var deregister = LogCodec.encode(persistentCommandsV5().get(1));
    assertThat(((Command.Register) LogCodec.decode(register, 4)).claim().admin()).isTrue();
    assertThat(((Command.Deregister) LogCodec.decode(deregister, 4)).claim()).isEqualTo(new Claim("", 0, "app-a", true));
    assertThat(((Command.Register) LogCodec.decode(register, 5)).claim().admin()).isFalse();
    assertThat(((Command.Deregister) LogCodec.decode(deregister, 5)).claim()).isEqualTo(new Claim("", 0, "app-a", false));
    assertThat(LogCodec.decode(LogCodec.encode(new Command.Deregister(SESSION, ORDERS, A.key())), 5))
        .as("an owner's own removal carries no identity").isEqualTo(new Command.Deregister(SESSION, ORDERS, A.key()));
  }

  @Test
  void aSnapshotOfFormatFourReadsAsWrittenHealthChecksIncluded() throws IOException {
    SnapshotCodec.Loaded loaded;
    try (InputStream in = Files.newInputStream(path("snapshot-v4.bin"))) {
      loaded = SnapshotCodec.read(in, "snapshot-v4.bin");
    }
    assertThat(loaded.image()).isEqualTo(imageV4());
  }

  /**
   * A newer format only where it is needed: a cluster without auth or persistent instances writes
   * what format-1 members read, one without persistent instances what format-2 members read, one
   * without health checks what format-3 members read.
   */
  @Test
  void thisCodeWritesANewerFormatOnlyForWhatNeedsIt() throws IOException {
    assertThat(batch().getFormat()).as("a batch built here carries no format until the proposer sets it").isZero();
    assertThat(batch().getCommandsList()).allMatch(c -> LogCodec.formatOf(c) == 1);
    assertThat(batchV2().getCommandsList()).anyMatch(c -> LogCodec.formatOf(c) == 2)
        .noneMatch(c -> LogCodec.formatOf(c) == 3);
    assertThat(batchV3().getCommandsList()).anyMatch(c -> LogCodec.formatOf(c) == 3)
        .noneMatch(c -> LogCodec.formatOf(c) == 4);
    assertThat(batchV4().getCommandsList()).anyMatch(c -> LogCodec.formatOf(c) == 4)
        .noneMatch(c -> LogCodec.formatOf(c) == 5);
    assertThat(batchV5().getCommandsList()).anyMatch(c -> LogCodec.formatOf(c) == 5)
        .noneMatch(c -> LogCodec.formatOf(c) == 6);
    assertThat(batchV6().getCommandsList()).anyMatch(c -> LogCodec.formatOf(c) == 6);
    assertThat(LogCodec.FORMAT).isEqualTo(6);
    assertThat(snapshotFormat(image())).isEqualTo(1);
    assertThat(snapshotFormat(imageV2())).isEqualTo(2);
    assertThat(snapshotFormat(imageV3())).isEqualTo(3);
    assertThat(snapshotFormat(imageV4())).isEqualTo(4);
    assertThat(snapshotFormat(imageV6())).isEqualTo(6);
  }

  private static int snapshotFormat(Registry.Image image) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    SnapshotCodec.write(out, image, members(), List.of("n3"));
    return io.roster.proto.cluster.v1.SnapshotHeader.parseDelimitedFrom(new java.io.ByteArrayInputStream(
        out.toByteArray())).getFormat();
  }

  /** A member never skips or misreads what a newer Roster wrote: it refuses, saying what and why. */
  @Test
  void aFormatNewerThanThisCodeIsRefusedNamingTheFileTheFormatAndWhatToDo() throws IOException {
    assertThat(LogCodec.checkFormat(0, "x")).as("before formats were numbered").isEqualTo(1);
    assertThat(LogCodec.checkFormat(LogCodec.FORMAT, "x")).isEqualTo(LogCodec.FORMAT);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    io.roster.proto.cluster.v1.SnapshotHeader.newBuilder().setFormat(LogCodec.FORMAT + 1).build().writeDelimitedTo(out);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> SnapshotCodec.read(
            new java.io.ByteArrayInputStream(out.toByteArray()), "the snapshot /data/raft/sm/snapshot.1_2"))
        .isInstanceOf(LogCodec.UnknownFormatException.class)
        .hasMessage("the snapshot /data/raft/sm/snapshot.1_2 is in format " + (LogCodec.FORMAT + 1) + ", and this "
            + "Roster reads formats up to " + LogCodec.FORMAT + ". Start this member with a Roster at least as new as "
            + "the one that wrote it; nothing was skipped or deleted.");
  }

  /** The registry commands of an entry of {@code format}, in order (membership commands decode to none). */
  private static List<Command<?>> decoded(Batch entry, int format) {
    List<Command<?>> decoded = new ArrayList<>();
    for (io.roster.proto.cluster.v1.Command c : entry.getCommandsList()) {
      Command<?> d = LogCodec.decode(c, format);
      if (d != null) {
        decoded.add(d);
      }
    }
    return decoded;
  }

  private static byte[] golden(String name) throws IOException {
    return Files.readAllBytes(path(name));
  }

  private static Path path(String name) {
    return Path.of("src/test/resources/golden", name);
  }

  /** Writes the golden files of the format this code writes, as version {@code args[0]}. */
  public static void main(String[] args) throws IOException {
    String v = args[0];
    Files.createDirectories(path(""));
    Batch entry = switch (v) {
      case "1" -> batch();
      case "2" -> batchV2();
      case "3" -> batchV3();
      case "4" -> batchV4();
      case "5" -> batchV5();
      default -> batchV6();
    };
    Files.write(path("log-entry-v" + v + ".bin"), entry.toByteArray());
    if (v.equals("5")) {
      return; // format 5 changed the log's entries only: snapshots stay in format 4
    }
    ByteArrayOutputStream snapshot = new ByteArrayOutputStream();
    SnapshotCodec.write(snapshot, switch (v) {
      case "1" -> image();
      case "2" -> imageV2();
      case "3" -> imageV3();
      case "4" -> imageV4();
      default -> imageV6();
    }, members(), List.of("n3"));
    Files.write(path("snapshot-v" + v + ".bin"), snapshot.toByteArray());
  }
}
