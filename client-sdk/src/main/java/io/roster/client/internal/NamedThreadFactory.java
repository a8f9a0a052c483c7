package io.roster.client.internal;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** Daemon threads named {@code prefix-N}. */
final class NamedThreadFactory implements ThreadFactory {

  private final String prefix;
  private final AtomicInteger counter = new AtomicInteger();

  NamedThreadFactory(String prefix) {
    this.prefix = prefix;
  }

  @Override
  public Thread newThread(Runnable r) {
    Thread t = new Thread(r, prefix + "-" + counter.incrementAndGet());
    t.setDaemon(true);
    return t;
  }
}
