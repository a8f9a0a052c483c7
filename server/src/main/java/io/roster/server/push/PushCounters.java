package io.roster.server.push;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;

/**
 * What every session's {@link PushQueue} has done, added up for the server's metrics: pushes
 * written (full or delta) and their bytes, acks, re-sends, resyncs, and unsent states dropped.
 * Counting is a {@link LongAdder} increment; nothing here knows how the numbers are exported.
 *
 * <p>Thread-safe.
 */
public final class PushCounters {

  final LongAdder full = new LongAdder();
  final LongAdder delta = new LongAdder();
  final LongAdder bytes = new LongAdder();
  final LongAdder acks = new LongAdder();
  final LongAdder resends = new LongAdder();
  final LongAdder resyncs = new LongAdder();
  final LongAdder superseded = new LongAdder();
  final LongAdder closed = new LongAdder();
  private volatile LongConsumer changeAcked = revision -> { };

  /** Pushes written in full, re-sends included. */
  public long full() {
    return full.sum();
  }

  /** Pushes written as deltas, re-sends included. */
  public long delta() {
    return delta.sum();
  }

  /** Bytes of pushes written, as their encoders reported them. */
  public long bytes() {
    return bytes.sum();
  }

  /** Pushes a client acknowledged. */
  public long acks() {
    return acks.sum();
  }

  /** Pushes sent again because no ack came within the ack timeout. */
  public long resends() {
    return resends.sum();
  }

  /** Deltas a client could not apply. */
  public long resyncs() {
    return resyncs.sum();
  }

  /** Unsent states replaced by a newer state of their service before they went out. */
  public long superseded() {
    return superseded.sum();
  }

  /** Unsent states dropped because their session ended. */
  public long closed() {
    return closed.sum();
  }

  /**
   * Told of each ack of a push that carried a change (not a subscription's first state), with the
   * revision acked: the registry's wall-clock microseconds of the change, so the listener can
   * tell how long the change took to reach the client.
   */
  public void onChangeAcked(LongConsumer revision) {
    this.changeAcked = revision;
  }

  void changeAcked(long revision) {
    changeAcked.accept(revision);
  }
}
