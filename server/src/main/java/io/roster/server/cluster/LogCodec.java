package io.roster.server.cluster;

import io.roster.proto.cluster.v1.Command.ChangeCase;
import io.roster.proto.cluster.v1.HealthCheckType;
import io.roster.proto.cluster.v1.OwnerKind;
import io.roster.proto.cluster.v1.SettingsState;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Claim;
import io.roster.server.registry.Command;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.ServiceSettings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Registry {@link Command}s to log entries and back. Exact both ways: an instance read back
 * equals the one written (every field, the id included), so every member stores the same value.
 */
public final class LogCodec {

  /**
   * The format of the log entries and snapshots this code writes. Raise it when a change to
   * log.proto would be misread by an older member, add that format's golden files
   * ({@code LogFormatGoldenTest}), and keep reading every older one.
   */
  static final int FORMAT = 5;

  /**
   * The format {@code command} needs: 5 when an identity that is not an admin registers or
   * deregisters a persistent instance, which a format-4 reader would let replace or remove
   * another identity's; 4 when it sets health checks, which a format-3 reader would
   * drop; 3 when it registers or deregisters a persistent instance,
   * whose owner kind a format-2 reader does not know; 2 when it carries an identity (auth on,
   * decision 65), which a format-1 reader would ignore and so apply what the others refuse; 1
   * otherwise, so that a cluster without these keeps writing what an older member reads.
   */
  static int formatOf(io.roster.proto.cluster.v1.Command command) {
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
      case MEMBER_STARTED, MEMBER_DOWN, END_STALE_OWNERS, MEMBER_LOAD -> null;
      case CHANGE_NOT_SET -> throw new IllegalArgumentException("a log command with no change");
    };
  }

  static io.roster.proto.cluster.v1.Owner owner(Owner o) {
    return io.roster.proto.cluster.v1.Owner.newBuilder().setNode(o.nodeId()).setKind(switch (o.kind()) {
      case SESSION -> OwnerKind.OWNER_KIND_SESSION;
      case NACOS -> OwnerKind.OWNER_KIND_NACOS;
      case LEASE -> OwnerKind.OWNER_KIND_LEASE;
      case PERSISTENT -> OwnerKind.OWNER_KIND_PERSISTENT;
    }).setId(o.id()).build();
  }

  static Owner owner(io.roster.proto.cluster.v1.Owner p) {
    Owner.Kind kind = switch (p.getKind()) {
      case OWNER_KIND_SESSION -> Owner.Kind.SESSION;
      case OWNER_KIND_NACOS -> Owner.Kind.NACOS;
      case OWNER_KIND_LEASE -> Owner.Kind.LEASE;
      case OWNER_KIND_PERSISTENT -> Owner.Kind.PERSISTENT;
      case OWNER_KIND_UNSPECIFIED, UNRECOGNIZED -> throw new IllegalArgumentException("owner kind " + p.getKind());
    };
    return new Owner(p.getNode(), kind, p.getId());
  }

  /** A service's settings as the log, snapshots and the standalone store keep them. */
  public static SettingsState settings(ServiceKey service, ServiceSettings value) {
    SettingsState.Builder b = SettingsState.newBuilder().setService(service(service))
        .setProtectThreshold(value.protectThreshold()).putAllMetadata(value.metadata());
    value.checks().forEach((cluster, check) -> b.addChecks(check(cluster, check)));
    return b.build();
  }

  public static ServiceSettings settings(SettingsState p) {
    return new ServiceSettings(p.getProtectThreshold(), p.getMetadataMap(), checks(p.getChecksList()));
  }

  static io.roster.proto.cluster.v1.HealthCheck check(String cluster, HealthCheck c) {
    return io.roster.proto.cluster.v1.HealthCheck.newBuilder().setCluster(cluster).setType(switch (c.type()) {
      case TCP -> HealthCheckType.HEALTH_CHECK_TYPE_TCP;
      case HTTP -> HealthCheckType.HEALTH_CHECK_TYPE_HTTP;
      case NONE -> HealthCheckType.HEALTH_CHECK_TYPE_NONE;
    }).setCheckPort(c.checkPort()).setPath(c.path()).setExpectedStatus(c.expectedStatus())
        .putAllHeaders(c.headers()).build();
  }

  static Map<String, HealthCheck> checks(List<io.roster.proto.cluster.v1.HealthCheck> list) {
    Map<String, HealthCheck> checks = new HashMap<>();
    for (io.roster.proto.cluster.v1.HealthCheck p : list) {
      HealthCheck.Type type = switch (p.getType()) {
        case HEALTH_CHECK_TYPE_UNSPECIFIED, HEALTH_CHECK_TYPE_TCP -> HealthCheck.Type.TCP;
        case HEALTH_CHECK_TYPE_HTTP -> HealthCheck.Type.HTTP;
        case HEALTH_CHECK_TYPE_NONE -> HealthCheck.Type.NONE;
        case UNRECOGNIZED -> throw new IllegalArgumentException("health check type " + p.getTypeValue());
      };
      checks.put(p.getCluster(), new HealthCheck(type, p.getCheckPort(), p.getPath(), p.getExpectedStatus(),
          p.getHeadersMap()));
    }
    return checks;
  }

  public static io.roster.proto.cluster.v1.ServiceKey service(ServiceKey k) {
    return io.roster.proto.cluster.v1.ServiceKey.newBuilder()
        .setNamespace(k.namespace()).setGroup(k.group()).setName(k.name()).build();
  }

  public static ServiceKey service(io.roster.proto.cluster.v1.ServiceKey p) {
    return new ServiceKey(p.getNamespace(), p.getGroup(), p.getName());
  }

  public static io.roster.proto.cluster.v1.InstanceKey key(InstanceKey k) {
    return io.roster.proto.cluster.v1.InstanceKey.newBuilder()
        .setIp(k.ip()).setPort(k.port()).setCluster(k.cluster()).build();
  }

  public static InstanceKey key(io.roster.proto.cluster.v1.InstanceKey p) {
    return new InstanceKey(p.getIp(), p.getPort(), p.getCluster());
  }

  public static io.roster.proto.cluster.v1.Instance instance(Instance i) {
    return io.roster.proto.cluster.v1.Instance.newBuilder()
        .setIp(i.ip()).setPort(i.port()).setWeight(i.weight()).setHealthy(i.healthy()).setEnabled(i.enabled())
        .setEphemeral(i.ephemeral()).setCluster(i.cluster()).putAllMetadata(i.metadata())
        .setInstanceId(i.instanceId()).build();
  }

  public static Instance instance(io.roster.proto.cluster.v1.Instance p) {
    return new Instance(p.getIp(), p.getPort(), p.getWeight(), p.getHealthy(), p.getEnabled(), p.getEphemeral(),
        p.getCluster(), p.getMetadataMap(), p.getInstanceId());
  }
}
