package io.roster.server.testing.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A child JVM with its output (stdout and stderr) in a log file; killed when closed, and when the
 * JVM that started it exits.
 */
public class JavaProcess implements AutoCloseable {

  /** Where the tests' child JVMs write their output, under the module that runs them. */
  public static final Path LOGS = Path.of("target", "process-logs");
  /** The JVM flags of the tests' child JVMs: quick to start, small. */
  public static final List<String> TEST_JVM_FLAGS = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

  /**
   * Every child started by this JVM and not closed yet: killed when it exits, so that a test or a
   * bench that fails before it can close its processes (a cluster that did not start) leaves none
   * behind to load the machine for the tests and benchmarks after it.
   */
  private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly),
        "kill-child-processes"));
  }

  /** The child itself. */
  public final Process process;
  /** The child's output. */
  public final Path log;

  /**
   * A test's child JVM: {@link #TEST_JVM_FLAGS}, then {@code javaArgs}; its output in {@link #LOGS},
   * in a file named after {@code name}.
   */
  protected JavaProcess(String name, List<String> javaArgs) {
    this(LOGS.resolve(name + "-" + System.nanoTime() + ".log"), withTestFlags(javaArgs));
  }

  /** {@code java} with exactly {@code javaArgs}; its output in {@code log} (created anew). */
  protected JavaProcess(Path log, List<String> javaArgs) {
    this.log = log;
    try {
      if (log.getParent() != null) {
        Files.createDirectories(log.getParent());
      }
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.addAll(javaArgs);
      process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      LIVE.add(process);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<String> withTestFlags(List<String> javaArgs) {
    List<String> all = new ArrayList<>(TEST_JVM_FLAGS);
    all.addAll(javaArgs);
    return all;
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** Everything the child has written so far. */
  public String output() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "";
    }
  }

  /** The last {@code lines} lines of {@link #output()}. */
  public String tail(int lines) {
    List<String> all = output().lines().toList();
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }

  /** SIGKILL: no goodbye, no shutdown hook. Returns once the process is gone. */
  public void kill9() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
    LIVE.remove(process);
  }

  /** Sends {@code sig} (STOP, CONT, ...): with SIGSTOP the process freezes with its sockets open. */
  public void signal(String sig) throws IOException, InterruptedException {
    new ProcessBuilder("kill", "-" + sig, Long.toString(pid())).inheritIO().start().waitFor();
  }

  /** Kills the process (SIGKILL) if it still runs. */
  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      kill9();
    }
    LIVE.remove(process);
  }

  /** Resident set size from /proc, in KiB (Linux). */
  public long rssKib() {
    return status("VmRSS:");
  }

  /** Number of threads, from /proc (Linux). */
  public long threads() {
    return status("Threads:");
  }

  /** The number in a line of /proc/PID/status, e.g. {@code VmRSS:} (Linux). */
  private long status(String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid()), "status"))) {
        if (line.startsWith(field)) {
          return Long.parseLong(line.replaceAll("\\D+", ""));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    throw new IllegalStateException("no " + field + " for pid " + pid());
  }

  /** User + system CPU time of the process so far, milliseconds (from /proc/PID/stat, Linux). */
  public long cpuMillis() {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid()), "stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ", -1);
      // after "pid (comm) ": state is field 3, utime field 14, stime field 15
      long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
      return ticks * 1000 / ClockTicks.PER_SECOND;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The kernel's clock ticks per second, asked once, when first needed. */
  private static final class ClockTicks {
    static final long PER_SECOND = ask();

    private static long ask() {
      try {
        Process p = new ProcessBuilder("getconf", "CLK_TCK").start();
        return Long.parseLong(new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim());
      } catch (IOException | RuntimeException e) {
        return 100;
      }
    }
  }

  /** The test JVM's classpath (surefire hides it behind a manifest jar). */
  public static String testClasspath() {
    String cp = System.getProperty("surefire.test.class.path");
    return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
  }
}
