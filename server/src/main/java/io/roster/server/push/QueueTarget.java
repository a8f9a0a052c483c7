package io.roster.server.push;

import io.roster.server.model.ServiceKey;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link PushQueue} as the target of one service's subscription: owns nothing but the service
 * and the clusters filter; every call goes straight to the queue (and takes its lock).
 */
final class QueueTarget implements PushTarget {

  private final PushQueue queue;
  private final ServiceKey service;
  private final Set<String> clusters;

  QueueTarget(PushQueue queue, ServiceKey service, Set<String> clusters) {
    this.queue = queue;
    this.service = service;
    this.clusters = clusters;
  }

  @Override
  public Set<String> clusters() {
    return clusters;
  }

  @Override
  public void offer(PushPayload payload) {
    queue.offer(service, payload);
  }

  @Override
  public CompletableFuture<Boolean> whenAcked(long revision) {
    return queue.whenAcked(service, revision);
  }

  @Override
  public String toString() {
    return "push target of " + service + (clusters.isEmpty() ? "" : " " + clusters);
  }
}
