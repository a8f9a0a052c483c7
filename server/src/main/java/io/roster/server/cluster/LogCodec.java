package io.roster.server.cluster;

import static io.roster.server.codec.ValueCodec.check;
import static io.roster.server.codec.ValueCodec.checks;
import static io.roster.server.codec.ValueCodec.instance;
import static io.roster.server.codec.ValueCodec.key;
import static io.roster.server.codec.ValueCodec.owner;
import static io.roster.server.codec.ValueCodec.service;

import io.roster.proto.cluster.v1.Command.ChangeCase;
import io.roster.proto.cluster.v1.OwnerKind;
import io.roster.server.codec.ValueCodec;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Claim;
import io.roster.server.registry.Command;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Registry {@link Command}s to log entries and back. Exact both ways: an instance read back
 * equals the one written (every field, the id included), so every member stores the same value.
 * The values inside a command are {@link io.roster.server.codec.ValueCodec}'s, which the
 * snapshots and the standalone store share.
 */
public final class LogCodec {

  /**
   * The format of the log entries and snapshots this code writes. Raise it when a change to
   * log.proto would be misread by an older member, add that format's golden files
   * ({@code LogFormatGoldenTest}), and keep reading every older one.
   */
  static final int FORMAT = 6;

  /**
   * The format {@code command} needs: 6 when it creates, edits or deletes a namespace, which a
   * format-5 reader does not know; 5 when an identity that is not an admin registers or
   * deregisters a persistent instance, which a format-4 reader would let replace or remove
   * another identity's; 4 when it sets health checks, which a format-3 reader would
   * drop; 3 when it registers or deregisters a persistent instance,
   * whose owner kind a format-2 reader does not know; 2 when it carries an identity (auth on,
   * decision 65), which a format-1 reader would ignore and so apply what the others refuse; 1
   * otherwise, so that a cluster without these keeps writing what an older member reads.
   */
  static int formatOf(io.roster.proto.cluster.v1.Command command) {
    if (command.hasPutNamespace() || command.hasDeleteNamespace()) {
      return 6;
    }
    var register = command.getRegister();
    var deregister = command.getDeregister();
    boolean persistentByIdentity = register.getOwner().getKind() == OwnerKind.OWNER_KIND_PERSISTENT
        && !register.getIdentity().isEmpty() && !register.getAdmin();
    boolean persistentRemoval = deregister.getOwner().getKind() == OwnerKind.OWNER_KIND_PERSISTENT
        && !deregister.getAdmin();
    if (persistentByIdentity || persistentRemoval) {
      return 5;
    }
    if (command.getUpdateSettings().getChecksCount() > 0) {
      return 4;
    }
    if (command.getRegister().getOwner().getKind() == OwnerKind.OWNER_KIND_PERSISTENT
        || command.getDeregister().getOwner().getKind() == OwnerKind.OWNER_KIND_PERSISTENT) {
      return 3;
    }
    return command.getRegister().getIdentity().isEmpty() && command.getReplaceOwned().getIdentity().isEmpty() ? 1 : 2;
  }

  private LogCodec() {}

  /**
   * The format a log entry or snapshot says it is in (0, written before formats were numbered,
   * is 1); throws when this code does not know it, naming {@code what} (the file or entry) and
   * what to do. Nothing is skipped or deleted.
   */
  static int checkFormat(int written, String what) throws UnknownFormatException {
    int format = written == 0 ? 1 : written;
    if (format > FORMAT) {
      throw new UnknownFormatException(what + " is in format " + format + ", and this Roster reads formats up to "
          + FORMAT + ". Start this member with a Roster at least as new as the one that wrote it; nothing was "
          + "skipped or deleted.");
    }
    return format;
  }

  /** A log entry or snapshot of a format this code does not know. */
  static final class UnknownFormatException extends java.io.IOException {
    UnknownFormatException(String message) {
      super(message);
    }
  }

  static io.roster.proto.cluster.v1.Command encode(Command<?> command) {
    var b = io.roster.proto.cluster.v1.Command.newBuilder();
    if (command instanceof Command.Register c) {
      b.setRegister(io.roster.proto.cluster.v1.Register.newBuilder()
          .setOwner(owner(c.owner())).setService(service(c.service())).setInstance(instance(c.instance()))
          .setClientId(c.claim().clientId()).setSessionSeq(c.claim().seq())
          .setIdentity(c.claim().identity()).setAdmin(c.claim().admin()));
    } else if (command instanceof Command.Deregister c) {
      var d = io.roster.proto.cluster.v1.Deregister.newBuilder()
          .setOwner(owner(c.owner())).setService(service(c.service())).setKey(key(c.key()));
      Claim claim = c.claim();
      if (claim != null) {
        d.setIdentity(claim.identity()).setAdmin(claim.admin());
      }
      b.setDeregister(d);
    } else if (command instanceof Command.ReplaceOwned c) {
      var r = io.roster.proto.cluster.v1.ReplaceOwned.newBuilder()
          .setOwner(owner(c.owner())).setService(service(c.service()))
          .setClientId(c.claim().clientId()).setSessionSeq(c.claim().seq())
          .setIdentity(c.claim().identity()).setAdmin(c.claim().admin());
      c.instances().forEach(i -> r.addInstances(instance(i)));
      b.setReplaceOwned(r);
    } else if (command instanceof Command.RemoveOwned c) {
      b.setRemoveOwned(io.roster.proto.cluster.v1.RemoveOwned.newBuilder()
          .setOwner(owner(c.owner())).setService(service(c.service())));
    } else if (command instanceof Command.RemoveOwner c) {
      b.setRemoveOwner(io.roster.proto.cluster.v1.RemoveOwner.newBuilder().setOwner(owner(c.owner())));
    } else if (command instanceof Command.UpdateInstance c) {
      var u = io.roster.proto.cluster.v1.UpdateInstance.newBuilder()
          .setService(service(c.service())).setKey(key(c.key()))
          .setReplaceMetadata(c.replaceMetadata()).putAllMetadata(c.metadata()).setHold(c.hold());
      if (c.enabled() != null) {
        u.setEnabled(c.enabled());
      }
      if (c.weight() != null) {
        u.setWeight(c.weight());
      }
      if (c.healthy() != null) {
        u.setHealthy(c.healthy());
      }
      b.setUpdateInstance(u);
    } else if (command instanceof Command.UpdateSettings c) {
      var u = io.roster.proto.cluster.v1.UpdateSettings.newBuilder()
          .setService(service(c.service())).setReplaceMetadata(c.replaceMetadata()).putAllMetadata(c.metadata());
      if (c.protectThreshold() != null) {
        u.setProtectThreshold(c.protectThreshold());
      }
      c.checks().forEach((cluster, check) -> u.addChecks(check(cluster, check)));
      b.setUpdateSettings(u);
    } else if (command instanceof Command.PutNamespace c) {
      b.setPutNamespace(io.roster.proto.cluster.v1.PutNamespace.newBuilder()
          .setNamespace(ValueCodec.namespace(c.namespace())).setCreate(c.create()));
    } else if (command instanceof Command.DeleteNamespace c) {
      b.setDeleteNamespace(io.roster.proto.cluster.v1.DeleteNamespace.newBuilder().setId(c.id()));
    } else {
      throw new IllegalArgumentException("no log form for " + command);
    }
    return b.build();
  }

  /**
   * The registry command of an entry's command, or null for a membership command.
   *
   * @param format the entry's format ({@link #checkFormat}): before format 5, the members that
   *     wrote an entry let any identity replace or remove a persistent instance, so its persistent
   *     registrations and removals decode as an admin's and apply as they did there
   */
  static @Nullable Command<?> decode(io.roster.proto.cluster.v1.Command p, int format) {
    ChangeCase kind = p.getChangeCase();
    return switch (kind) {
      case REGISTER -> {
        var r = p.getRegister();
        Owner owner = owner(r.getOwner());
        boolean unchecked = format < 5 && owner.kind() == Owner.Kind.PERSISTENT;
        yield new Command.Register(owner, service(r.getService()), instance(r.getInstance()),
            new Claim(r.getClientId(), r.getSessionSeq(), r.getIdentity(), r.getAdmin() || unchecked));
      }
      case DEREGISTER -> {
        var d = p.getDeregister();
        Owner owner = owner(d.getOwner());
        Claim claim = owner.kind() != Owner.Kind.PERSISTENT ? null
            : new Claim("", 0, d.getIdentity(), d.getAdmin() || format < 5);
        yield new Command.Deregister(owner, service(d.getService()), key(d.getKey()), claim);
      }
      case REPLACE_OWNED -> {
        var r = p.getReplaceOwned();
        List<Instance> list = new ArrayList<>(r.getInstancesCount());
        r.getInstancesList().forEach(i -> list.add(instance(i)));
        yield new Command.ReplaceOwned(owner(r.getOwner()), service(r.getService()), list,
            new Claim(r.getClientId(), r.getSessionSeq(), r.getIdentity(), r.getAdmin()));
      }
      case REMOVE_OWNED -> new Command.RemoveOwned(owner(p.getRemoveOwned().getOwner()),
          service(p.getRemoveOwned().getService()));
      case REMOVE_OWNER -> new Command.RemoveOwner(owner(p.getRemoveOwner().getOwner()));
      case UPDATE_INSTANCE -> {
        var u = p.getUpdateInstance();
        yield new Command.UpdateInstance(service(u.getService()), key(u.getKey()),
            u.hasEnabled() ? u.getEnabled() : null, u.hasWeight() ? u.getWeight() : null,
            u.hasHealthy() ? u.getHealthy() : null, u.getReplaceMetadata(), u.getMetadataMap(), u.getHold());
      }
      case UPDATE_SETTINGS -> {
        var u = p.getUpdateSettings();
        yield new Command.UpdateSettings(service(u.getService()),
            u.hasProtectThreshold() ? u.getProtectThreshold() : null, u.getReplaceMetadata(), u.getMetadataMap(),
            checks(u.getChecksList()));
      }
      case PUT_NAMESPACE -> new Command.PutNamespace(ValueCodec.namespace(p.getPutNamespace().getNamespace()),
          p.getPutNamespace().getCreate());
      case DELETE_NAMESPACE -> new Command.DeleteNamespace(p.getDeleteNamespace().getId());
      case MEMBER_STARTED, MEMBER_DOWN, END_STALE_OWNERS, MEMBER_LOAD -> null;
      case CHANGE_NOT_SET -> throw new IllegalArgumentException("a log command with no change");
    };
  }
}
