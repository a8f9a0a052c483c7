package io.roster.it;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * CPU starvation beside the servers: one shell process per core spinning in a loop at normal
 * priority, until closed. What a busy neighbour (a build, a batch job) does to a small machine.
 */
final class CpuHog implements AutoCloseable {

  private final List<Process> spinners = new ArrayList<>();

  private CpuHog(int processes) throws IOException {
    for (int i = 0; i < processes; i++) {
      spinners.add(new ProcessBuilder("sh", "-c", "while :; do :; done")
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start());
    }
  }

  /** One spinner per core of this machine. */
  static CpuHog everyCore() throws IOException {
    return perCore(1);
  }

  /** {@code n} spinners per core of this machine: as much other work as there are cores, n times over. */
  static CpuHog perCore(int n) throws IOException {
    return new CpuHog(n * Runtime.getRuntime().availableProcessors());
  }

  @Override
  public void close() throws InterruptedException {
    for (Process p : spinners) {
      p.destroyForcibly();
    }
    for (Process p : spinners) {
      p.waitFor(5, TimeUnit.SECONDS);
    }
  }
}
