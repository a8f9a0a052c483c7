package io.roster.server.cluster;

import io.roster.proto.cluster.v1.MemberState;
import io.roster.proto.cluster.v1.Registration;
import io.roster.proto.cluster.v1.ServiceState;
import io.roster.proto.cluster.v1.SettingsState;
import io.roster.proto.cluster.v1.SnapshotHeader;
import io.roster.server.codec.ValueCodec;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Registry;
import io.roster.server.registry.ServiceSettings;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A member's state to a snapshot file and back: a {@link SnapshotHeader}, then one
 * length-delimited {@link ServiceState} per service and one {@link MemberState} per member, so
 * that no single message has to hold a large registry.
 */
final class SnapshotCodec {

  private SnapshotCodec() {}

  /** What a snapshot holds. */
  record Loaded(Registry.Image image, List<RegistryStateMachine.Member> members, List<String> stale,
      Map<String, Long> lastSequences) {}

  static void write(OutputStream out, Registry.Image image, List<RegistryStateMachine.Member> members,
      List<String> stale) throws IOException {
    write(out, image, members, stale, Map.of());
  }

  /** @param lastSequences by {@code member@incarnation}: the last batch of it the log applied */
  static void write(OutputStream out, Registry.Image image, List<RegistryStateMachine.Member> members,
      List<String> stale, Map<String, Long> lastSequences) throws IOException {
    SnapshotHeader.Builder header = SnapshotHeader.newBuilder()
        .setLastRevision(image.lastRevision()).setAbsentRevision(image.absentRevision())
        .setServices(image.services().size()).setMembers(members.size()).addAllStaleMembers(stale)
        .setFormat(format(image));
    image.settings().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e ->
        header.addSettings(ValueCodec.settings(e.getKey(), e.getValue())));
    image.namespaces().forEach(n -> header.addNamespaces(ValueCodec.namespace(n)));
    header.build().writeDelimitedTo(out);
    for (Registry.ServiceImage s : image.services()) {
      ServiceState.Builder b = ServiceState.newBuilder().setService(ValueCodec.service(s.service()))
          .setRevision(s.revision());
      for (Registry.Held h : s.registrations()) {
        b.addRegistrations(Registration.newBuilder().setOwner(ValueCodec.owner(h.owner()))
            .setInstance(ValueCodec.instance(h.instance()))
            .setClientId(h.claim().clientId()).setSessionSeq(h.claim().seq()).setOperatorHeld(h.operatorHeld())
            .setIdentity(h.claim().identity()));
      }
      b.build().writeDelimitedTo(out);
    }
    for (RegistryStateMachine.Member m : members) {
      MemberState.newBuilder().setId(m.id()).setIncarnation(m.incarnation()).setClientAddress(m.clientAddress())
          .setDown(m.down()).setSessions(m.sessions()).setLastSequence(lastSequences.getOrDefault(m.id() + "@" + m.incarnation(), 0L))
          .build().writeDelimitedTo(out);
    }
  }

  /**
   * The oldest format that holds {@code image}: 6 with created namespaces (which format 5 would
   * drop), 4 with health checks (which format 3 would drop),
   * 3 with persistent instances (an owner kind format 2 does not know), 2 with registering
   * identities, 1 otherwise (see {@link LogCodec#formatOf}).
   */
  static int format(Registry.Image image) {
    if (!image.namespaces().isEmpty()) {
      return 6;
    }
    if (image.settings().values().stream().anyMatch(s -> !s.checks().isEmpty())) {
      return 4;
    }
    int format = 1;
    for (Registry.ServiceImage s : image.services()) {
      for (Registry.Held h : s.registrations()) {
        if (h.owner().kind() == io.roster.server.model.Owner.Kind.PERSISTENT) {
          return 3;
        }
        if (!h.claim().identity().isEmpty()) {
          format = 2;
        }
      }
    }
    return format;
  }

  /**
   * @param what names the file in errors
   * @throws LogCodec.UnknownFormatException for a format this code does not know
   */
  static Loaded read(InputStream in, String what) throws IOException {
    SnapshotHeader header = SnapshotHeader.parseDelimitedFrom(in);
    if (header == null) {
      throw new EOFException("an empty snapshot file");
    }
    LogCodec.checkFormat(header.getFormat(), what);
    Map<ServiceKey, ServiceSettings> settings = new HashMap<>();
    for (SettingsState s : header.getSettingsList()) {
      settings.put(ValueCodec.service(s.getService()), ValueCodec.settings(s));
    }
    List<Registry.ServiceImage> services = new ArrayList<>(header.getServices());
    for (int i = 0; i < header.getServices(); i++) {
      ServiceState s = ServiceState.parseDelimitedFrom(in);
      if (s == null) {
        throw new EOFException("snapshot ends after " + i + " of " + header.getServices() + " services");
      }
      List<Registry.Held> held = new ArrayList<>(s.getRegistrationsCount());
      for (Registration r : s.getRegistrationsList()) {
        held.add(new Registry.Held(ValueCodec.owner(r.getOwner()), ValueCodec.instance(r.getInstance()),
            new io.roster.server.registry.Claim(r.getClientId(), r.getSessionSeq(), r.getIdentity(), false),
            r.getOperatorHeld()));
      }
      services.add(new Registry.ServiceImage(ValueCodec.service(s.getService()), s.getRevision(), held));
    }
    List<RegistryStateMachine.Member> members = new ArrayList<>(header.getMembers());
    Map<String, Long> lastSequences = new HashMap<>();
    for (int i = 0; i < header.getMembers(); i++) {
      MemberState m = MemberState.parseDelimitedFrom(in);
      if (m == null) {
        throw new EOFException("snapshot ends after " + i + " of " + header.getMembers() + " members");
      }
      members.add(new RegistryStateMachine.Member(m.getId(), m.getIncarnation(), m.getClientAddress(), m.getDown(),
          m.getSessions()));
      if (m.getLastSequence() > 0) {
        lastSequences.put(m.getId() + "@" + m.getIncarnation(), m.getLastSequence());
      }
    }
    List<io.roster.server.registry.Namespace> namespaces = new ArrayList<>(header.getNamespacesCount());
    header.getNamespacesList().forEach(n -> namespaces.add(ValueCodec.namespace(n)));
    return new Loaded(new Registry.Image(header.getLastRevision(), header.getAbsentRevision(), services, settings,
        List.copyOf(namespaces)),
        members, header.getStaleMembersList(), lastSequences);
  }
}
