package io.roster.it;

import io.roster.server.testing.process.JavaProcess;
import java.util.ArrayList;
import java.util.List;

/**
 * Other work on the machine, as a child JVM: {@code threads} threads spinning at normal priority
 * until the process is killed (a loaded machine, as when other processes share its cores).
 * Args: threads.
 */
public final class CpuHog {

  private CpuHog() {}

  public static void main(String[] args) throws InterruptedException {
    int threads = Integer.parseInt(args[0]);
    List<Thread> spinning = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(() -> {
        long x = 0;
        while (!Thread.currentThread().isInterrupted()) {
          x = x * 6364136223846793005L + 1442695040888963407L;
        }
        System.out.println(x);
      }, "hog-" + i);
      t.start();
      spinning.add(t);
    }
    System.out.println("SPINNING " + threads);
    for (Thread t : spinning) {
      t.join();
    }
  }

  /**
   * {@link CpuHog} in a child JVM, spinning two threads per core of this machine (as much other
   * work as there are cores to run it, twice over); killed on close.
   */
  static final class Process extends JavaProcess {
    Process() {
      super("cpu-hog", List.of("-Xmx32m", "-cp", testClasspath(), CpuHog.class.getName(),
          Integer.toString(2 * Runtime.getRuntime().availableProcessors())));
    }
  }
}
