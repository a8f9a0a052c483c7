package io.roster.client;

/**
 * What a drain achieved, as the server counted it. Counts are per subscription of another
 * client to one of the drained services; {@code notified = acked + timedOut + disconnected}.
 *
 * @param notified subscriptions the removal was pushed to
 * @param acked of those, how many confirmed the new list before the timeout
 * @param timedOut of those, how many had not confirmed when the timeout passed: they may
 *     still route traffic to the drained instances until their poll or a later push heals them
 * @param disconnected of those, how many disconnected or unsubscribed before confirming
 */
public record DrainResult(int notified, int acked, int timedOut, int disconnected) {

  /** Whether every notified subscriber confirmed or went away: nobody still holds the old list. */
  public boolean complete() {
    return timedOut == 0;
  }
}
