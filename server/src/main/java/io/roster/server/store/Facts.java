package io.roster.server.store;

import io.roster.proto.cluster.v1.Fact;
import io.roster.proto.cluster.v1.NamespaceFact;
import io.roster.proto.cluster.v1.PersistentInstance;
import io.roster.proto.cluster.v1.SettingsState;
import io.roster.server.codec.ValueCodec;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Namespace;
import io.roster.server.registry.ServiceSettings;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Durable state as facts make it: each fact replaces what the state held for its key. The store
 * keeps one; {@code check} builds one from the files to count what they hold. Not thread-safe.
 */
final class Facts {

  final Map<ServiceKey, ServiceSettings> settings = new HashMap<>();
  final Set<StateStore.InstanceRef> holds = new LinkedHashSet<>();
  final Map<StateStore.InstanceRef, StateStore.Stored> persistent = new LinkedHashMap<>();
  final Map<String, Namespace> namespaces = new TreeMap<>();

  /**
   * Applies {@code f}.
   *
   * @throws RuntimeException when the fact holds a value Roster refuses (a bad address, a port out of range)
   */
  void apply(Fact f) {
    if (f.hasSettings()) {
      SettingsState s = f.getSettings();
      ServiceKey service = ValueCodec.service(s.getService());
      ServiceSettings value = ValueCodec.settings(s);
      if (value.equals(ServiceSettings.DEFAULT)) {
        settings.remove(service);
      } else {
        settings.put(service, value);
      }
    } else if (f.hasPersistent()) {
      PersistentInstance p = f.getPersistent();
      StateStore.InstanceRef k = new StateStore.InstanceRef(ValueCodec.service(p.getService()), ValueCodec.key(p.getKey()));
      if (p.hasInstance()) {
        persistent.put(k, new StateStore.Stored(ValueCodec.instance(p.getInstance()), p.getIdentity()));
      } else {
        persistent.remove(k);
      }
    } else if (f.hasNamespace()) {
      NamespaceFact n = f.getNamespace();
      Namespace.checkId("namespace.id", n.getId());
      if (n.hasNamespace()) {
        namespaces.put(n.getId(), ValueCodec.namespace(n.getNamespace()));
      } else {
        namespaces.remove(n.getId());
      }
    } else if (f.hasHold()) {
      StateStore.InstanceRef k = new StateStore.InstanceRef(ValueCodec.service(f.getHold().getService()),
          ValueCodec.key(f.getHold().getKey()));
      if (f.getHold().getHeld()) {
        holds.add(k);
      } else {
        holds.remove(k);
      }
    }
  }

  StateStore.State state() {
    return new StateStore.State(settings, holds, persistent, List.copyOf(namespaces.values()));
  }

  /** How many facts a state file of this state holds. */
  int size() {
    return settings.size() + holds.size() + persistent.size() + namespaces.size();
  }

  /** "3 service settings, 1 hold, 12 persistent instances". */
  String counts() {
    return counts(settings.size(), holds.size(), persistent.size());
  }

  static String counts(int settings, int holds, int persistent) {
    return settings + " service settings, " + holds + (holds == 1 ? " hold, " : " holds, ") + persistent
        + (persistent == 1 ? " persistent instance" : " persistent instances");
  }
}
