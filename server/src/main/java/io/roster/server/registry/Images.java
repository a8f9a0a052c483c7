package io.roster.server.registry;

import io.roster.server.model.Instance;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.WireSize;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * The registry as values and back (see {@link Registry#image}, {@link Registry#restore}): what a
 * cluster member writes to a snapshot and loads again. Owns nothing: it reads and replaces
 * {@link Services}' state.
 */
final class Images {

  private final Services core;
  private final NamespaceBook namespaces;

  Images(Services core, NamespaceBook namespaces) {
    this.core = core;
    this.namespaces = namespaces;
  }

  Registry.Image image() {
    List<Registry.ServiceImage> list = new ArrayList<>(core.entries.size());
    for (ServiceKey key : core.index) {
      Registry.ServiceImage image = serviceImage(key);
      if (image != null) {
        list.add(image);
      }
    }
    return new Registry.Image(core.lastRevision.get(), core.absentRevision, list, Map.copyOf(core.settings),
        namespaces.created());
  }

  Registry.@Nullable ServiceImage serviceImage(ServiceKey key) {
    ServiceEntry e = core.entries.get(key);
    if (e == null) {
      return null;
    }
    synchronized (e) {
      List<Registry.Held> held = new ArrayList<>(e.registrations.size());
      for (Registration r : e.registrations.values()) {
        held.add(new Registry.Held(r.owner(), r.instance(), r.claim(), r.held()));
      }
      held.sort((a, b) -> Instance.ORDER.compare(a.instance(), b.instance()));
      return new Registry.ServiceImage(key, e.revision, held);
    }
  }

  /** Replaces everything with {@code image}; counts nothing (a {@link Cause#RESTORE}). */
  void restore(Registry.Image image) {
    Set<ServiceKey> touched = new TreeSet<>(core.entries.keySet());
    for (ServiceEntry e : new ArrayList<>(core.entries.values())) {
      synchronized (e) {
        for (Registration r : new ArrayList<>(e.registrations.values())) {
          e.removeIfOwned(r.owner(), null, r.instance().key(), Cause.RESTORE);
        }
        e.removed = true;
      }
    }
    core.departures.keepAfter(image);
    namespaces.restore(image.namespaces());
    core.entries.clear();
    core.index.clear();
    core.settings.clear();
    core.settingsBytes.set(0);
    image.settings().forEach((k, v) -> {
      core.settings.put(k, v);
      core.settingsBytes.addAndGet(v.footprint(k));
    });
    for (Registry.ServiceImage si : image.services()) {
      ServiceEntry e = new ServiceEntry(si.service(), core);
      synchronized (e) {
        for (Registry.Held h : si.registrations()) {
          e.store(h.owner(), h.claim(), h.instance(), WireSize.ofInstanceInList(h.instance()), Cause.RESTORE);
          e.hold(h.instance().key(), h.operatorHeld());
        }
        e.revision = si.revision();
      }
      core.entries.put(si.service(), e);
      core.index.add(si.service());
      touched.add(si.service());
    }
    core.owners.values().removeIf(h -> h.tally.count() == 0 && h.services.isEmpty() && h.tally.isStandalone());
    core.lastRevision.set(image.lastRevision());
    core.absentRevision = image.absentRevision();
    for (ServiceKey k : touched) {
      core.publish(k, null, Change.Kind.RESTORED, core.snapshot(k).revision());
    }
  }
}
