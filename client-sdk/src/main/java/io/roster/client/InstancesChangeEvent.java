package io.roster.client;

import java.util.List;
import java.util.Objects;

/**
 * The new state of a subscribed service, delivered to a {@link Listener}: the complete instance
 * list plus how it differs from the previous list the client had.
 *
 * <p>Instances are compared by identity (ip, port, cluster): {@link #added()} are identities
 * that are new, {@link #removed()} are identities that are gone (with their last known values),
 * and {@link #modified()} are identities present before and after whose content changed (with
 * their new values). An event is only delivered when the visible content changed, except the
 * first event of a listener, which carries the whole current list in {@link #added()}. A
 * listener slower than the changes skips intermediate states: each event is the difference
 * from the state that listener last heard of, so memory stays bounded.
 *
 * @param namespace the service's namespace
 * @param group the service's group
 * @param serviceName the service's name
 * @param instances the complete new list of visible (enabled) instances; unmodifiable
 * @param added instances whose identity is new; unmodifiable
 * @param removed instances whose identity is gone, as they were; unmodifiable
 * @param modified instances whose identity stayed but whose content changed, as they are now;
 *     unmodifiable
 * @param revision the server's revision of this state; grows with every change
 * @param emptyPushIgnored true when the server's state had no instances and push-empty
 *     protection ({@code RosterClient.Builder#pushEmptyProtection}) kept the last non-empty
 *     list instead; {@link #instances()} is that list. Told once, when it starts; the next
 *     event with a non-empty server state has it false again.
 * @param protectThresholdReached true when the service's protect threshold is reached: the
 *     list includes unhealthy instances (marked {@code healthy=false}) and
 *     {@code selectOneHealthyInstance} picks among all of them
 */
public record InstancesChangeEvent(
    String namespace,
    String group,
    String serviceName,
    List<Instance> instances,
    List<Instance> added,
    List<Instance> removed,
    List<Instance> modified,
    long revision,
    boolean emptyPushIgnored,
    boolean protectThresholdReached) {

  /** Checks for nulls and copies the lists. */
  public InstancesChangeEvent {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(serviceName, "serviceName");
    instances = List.copyOf(instances);
    added = List.copyOf(added);
    removed = List.copyOf(removed);
    modified = List.copyOf(modified);
  }
}
