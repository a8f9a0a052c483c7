package io.roster.server.rpc;

import io.roster.proto.v1.InstanceIdentity;
import io.roster.proto.v1.ServiceInfo;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceDelta;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.registry.HealthCheck;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** The one place where protobuf messages become model values and back. */
final class ProtoMapper {

  private ProtoMapper() {}

  /** A service key; an empty namespace takes the session's (or "public"). */
  static ServiceKey serviceKey(io.roster.proto.v1.ServiceKey p, String defaultNamespace) {
    return ServiceKey.of(p.getNamespace().isEmpty() ? defaultNamespace : p.getNamespace(), p.getGroup(), p.getName());
  }

  /**
   * An instance as registered over a session: ephemeral and healthy; weight unset means 1.0
   * and enabled unset means true.
   */
  static Instance ephemeralInstance(io.roster.proto.v1.Instance p) {
    return registered(p, true);
  }

  /**
   * An instance as Registry/RegisterInstance registers it: persistent, healthy until told
   * otherwise (UpdateInstance); weight and enabled as for {@link #ephemeralInstance}.
   */
  static Instance persistentInstance(io.roster.proto.v1.Instance p) {
    return registered(p, false);
  }

  private static Instance registered(io.roster.proto.v1.Instance p, boolean ephemeral) {
    if (p.getPort() < 0) {
      throw RegistryException.invalid("instance.port", Integer.toUnsignedLong(p.getPort()), "1..65535");
    }
    return new Instance(p.getIp(), p.getPort(), p.hasWeight() ? p.getWeight() : 1.0, true,
        !p.hasEnabled() || p.getEnabled(), ephemeral, p.getCluster(), p.getMetadataMap(), "");
  }

  /** Same as {@link #ephemeralInstance}, with errors naming {@code instances[i]}. */
  static Instance ephemeralInstance(io.roster.proto.v1.Instance p, int index) {
    try {
      return ephemeralInstance(p);
    } catch (RegistryException e) {
      String field = e.field().replaceFirst("^instance", "instances[" + index + "]");
      String message = e.getMessage().replaceFirst("^instance", "instances[" + index + "]");
      throw new RegistryException(e.kind(), field, message);
    }
  }

  /** The identity fields of an instance (for deregister). */
  static InstanceKey instanceKey(io.roster.proto.v1.Instance p) {
    return new InstanceKey(p.getIp(), p.getPort(), p.getCluster().isEmpty() ? Names.DEFAULT_CLUSTER : p.getCluster());
  }

  /** The identity an operator names (UpdateInstance, DrainInstance); an empty cluster is DEFAULT. */
  static InstanceKey instanceKey(String ip, int port, String cluster) {
    return new InstanceKey(ip, port, cluster.isEmpty() ? Names.DEFAULT_CLUSTER : Names.cluster("cluster", cluster));
  }

  /** A clusters filter; each name validated. */
  static Set<String> clusters(List<String> names, String field) {
    if (names.isEmpty()) {
      return Set.of();
    }
    Set<String> set = new LinkedHashSet<>();
    for (int i = 0; i < names.size(); i++) {
      set.add(Names.cluster(field + "[" + i + "]", names.get(i)));
    }
    return Set.copyOf(set);
  }

  static io.roster.proto.v1.ServiceKey toProto(ServiceKey k) {
    return io.roster.proto.v1.ServiceKey.newBuilder()
        .setNamespace(k.namespace()).setGroup(k.group()).setName(k.name()).build();
  }

  static io.roster.proto.v1.Instance toProto(Instance i) {
    return io.roster.proto.v1.Instance.newBuilder()
        .setIp(i.ip())
        .setPort(i.port())
        .setWeight(i.weight())
        .setHealthy(i.healthy())
        .setEnabled(i.enabled())
        .setEphemeral(i.ephemeral())
        .setCluster(i.cluster())
        .putAllMetadata(i.metadata())
        .setInstanceId(i.instanceId())
        .build();
  }

  static ServiceInfo toProto(ServiceSnapshot s) {
    ServiceInfo.Builder b = ServiceInfo.newBuilder()
        .setService(toProto(s.service()))
        .setRevision(s.revision())
        .setChecksum(s.checksum())
        .setProtectThresholdReached(s.protectThresholdReached());
    for (Instance i : s.instances()) {
      b.addInstances(toProto(i));
    }
    for (InstanceKey k : s.departed()) {
      b.addDeparted(toProto(k));
    }
    return b.build();
  }

  static InstanceIdentity toProto(InstanceKey k) {
    return InstanceIdentity.newBuilder().setIp(k.ip()).setPort(k.port()).setCluster(k.cluster()).build();
  }

  /** A delta push's body: the target's header, the upserted instances and the removed identities. */
  static io.roster.proto.v1.ServiceDelta toProto(ServiceDelta d) {
    ServiceSnapshot target = d.target();
    io.roster.proto.v1.ServiceDelta.Builder b = io.roster.proto.v1.ServiceDelta.newBuilder()
        .setService(toProto(target.service()))
        .setBaseRevision(d.base().revision())
        .setRevision(target.revision())
        .setChecksum(target.checksum())
        .setProtectThresholdReached(target.protectThresholdReached());
    for (Instance i : d.upserted()) {
      b.addUpserted(toProto(i));
    }
    for (InstanceKey k : d.removed()) {
      b.addRemoved(toProto(k));
    }
    for (InstanceKey k : target.departed()) {
      b.addDeparted(toProto(k));
    }
    return b.build();
  }

  /** Only the identity of a state: what a "not modified" answer carries. */
  static ServiceInfo toProtoHeader(ServiceSnapshot s) {
    return ServiceInfo.newBuilder()
        .setService(toProto(s.service()))
        .setRevision(s.revision())
        .setChecksum(s.checksum())
        .setProtectThresholdReached(s.protectThresholdReached())
        .build();
  }

  /**
   * The health checks of an UpdateService, by cluster (empty: "DEFAULT"); each checked as it is
   * built, naming the field. A cluster named twice is refused.
   */
  static Map<String, HealthCheck> healthChecks(List<io.roster.proto.v1.HealthCheck> list) {
    Map<String, HealthCheck> checks = new HashMap<>();
    for (io.roster.proto.v1.HealthCheck p : list) {
      String cluster = Names.cluster("health_checks.cluster", p.getCluster().isEmpty() ? Names.DEFAULT_CLUSTER
          : p.getCluster());
      HealthCheck.Type type = switch (p.getType()) {
        case HEALTH_CHECK_TYPE_UNSPECIFIED, HEALTH_CHECK_TYPE_TCP -> HealthCheck.Type.TCP;
        case HEALTH_CHECK_TYPE_HTTP -> HealthCheck.Type.HTTP;
        case HEALTH_CHECK_TYPE_NONE -> HealthCheck.Type.NONE;
        case UNRECOGNIZED -> throw RegistryException.invalid("health_checks.type", p.getTypeValue(), "TCP, HTTP or NONE");
      };
      HealthCheck check = new HealthCheck(type, p.getCheckPort(), p.getPath(), p.getExpectedStatus(),
          p.getHeadersMap());
      if (checks.put(cluster, check) != null) {
        throw RegistryException.invalid("health_checks.cluster", cluster, "each cluster at most once");
      }
    }
    return checks;
  }

  /** The clusters' own health checks, by cluster name. */
  static List<io.roster.proto.v1.HealthCheck> toProto(Map<String, HealthCheck> checks) {
    return new TreeMap<>(checks).entrySet().stream().map(e -> io.roster.proto.v1.HealthCheck.newBuilder()
        .setCluster(e.getKey()).setType(switch (e.getValue().type()) {
          case TCP -> io.roster.proto.v1.HealthCheckType.HEALTH_CHECK_TYPE_TCP;
          case HTTP -> io.roster.proto.v1.HealthCheckType.HEALTH_CHECK_TYPE_HTTP;
          case NONE -> io.roster.proto.v1.HealthCheckType.HEALTH_CHECK_TYPE_NONE;
        }).setCheckPort(e.getValue().checkPort()).setPath(e.getValue().path())
        .setExpectedStatus(e.getValue().expectedStatus()).putAllHeaders(e.getValue().headers()).build()).toList();
  }
}
