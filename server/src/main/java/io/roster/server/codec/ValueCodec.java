package io.roster.server.codec;

import io.roster.proto.cluster.v1.HealthCheckType;
import io.roster.proto.cluster.v1.OwnerKind;
import io.roster.proto.cluster.v1.SettingsState;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.ServiceSettings;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The registry's values to the messages of log.proto and back: owners, instances, their keys,
 * services and their settings and health checks, as the cluster's log entries and snapshots and
 * the standalone store's files and backups all keep them. Exact both ways: an instance read back
 * equals the one written (every field, the id included). Stateless.
 */
public final class ValueCodec {

  private ValueCodec() {}

  public static io.roster.proto.cluster.v1.Owner owner(Owner o) {
    return io.roster.proto.cluster.v1.Owner.newBuilder().setNode(o.nodeId()).setKind(switch (o.kind()) {
      case SESSION -> OwnerKind.OWNER_KIND_SESSION;
      case NACOS -> OwnerKind.OWNER_KIND_NACOS;
      case LEASE -> OwnerKind.OWNER_KIND_LEASE;
      case PERSISTENT -> OwnerKind.OWNER_KIND_PERSISTENT;
    }).setId(o.id()).build();
  }

  public static Owner owner(io.roster.proto.cluster.v1.Owner p) {
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
  /** A created namespace to its log form (decision 97). */
  public static io.roster.proto.cluster.v1.NamespaceState namespace(io.roster.server.registry.Namespace n) {
    return io.roster.proto.cluster.v1.NamespaceState.newBuilder().setId(n.id()).setName(n.name())
        .setDescription(n.description()).build();
  }

  /** A created namespace from its log form; its id is checked as every namespace is. */
  public static io.roster.server.registry.Namespace namespace(io.roster.proto.cluster.v1.NamespaceState p) {
    io.roster.server.registry.Namespace.checkId("namespace.id", p.getId());
    return new io.roster.server.registry.Namespace(p.getId(), p.getName(), p.getDescription());
  }

  public static SettingsState settings(ServiceKey service, ServiceSettings value) {
    SettingsState.Builder b = SettingsState.newBuilder().setService(service(service))
        .setProtectThreshold(value.protectThreshold()).putAllMetadata(value.metadata());
    value.checks().forEach((cluster, check) -> b.addChecks(check(cluster, check)));
    return b.build();
  }

  /** The settings a {@link SettingsState} keeps. */
  public static ServiceSettings settings(SettingsState p) {
    return new ServiceSettings(p.getProtectThreshold(), p.getMetadataMap(), checks(p.getChecksList()));
  }

  public static io.roster.proto.cluster.v1.HealthCheck check(String cluster, HealthCheck c) {
    return io.roster.proto.cluster.v1.HealthCheck.newBuilder().setCluster(cluster).setType(switch (c.type()) {
      case TCP -> HealthCheckType.HEALTH_CHECK_TYPE_TCP;
      case HTTP -> HealthCheckType.HEALTH_CHECK_TYPE_HTTP;
      case NONE -> HealthCheckType.HEALTH_CHECK_TYPE_NONE;
    }).setCheckPort(c.checkPort()).setPath(c.path()).setExpectedStatus(c.expectedStatus())
        .putAllHeaders(c.headers()).build();
  }

  public static Map<String, HealthCheck> checks(List<io.roster.proto.cluster.v1.HealthCheck> list) {
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
