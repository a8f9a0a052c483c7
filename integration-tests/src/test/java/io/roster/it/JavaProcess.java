package io.roster.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** A child JVM with its output in a log file under target/; killed when closed. */
class JavaProcess implements AutoCloseable {

  private static final Path LOGS = Path.of("target", "process-logs");
  /**
   * Every child started by this test JVM: killed when it exits, so that a test that fails before
   * it can close its processes (a cluster that did not start) leaves none behind to load the
   * machine for the tests and benchmarks after it.
   */
  private static final java.util.Set<Process> LIVE = java.util.concurrent.ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly),
        "kill-child-processes"));
  }

  protected final Process process;
  final Path log;

  JavaProcess(String name, List<String> javaArgs) {
    try {
      Files.createDirectories(LOGS);
      log = LOGS.resolve(name + "-" + System.nanoTime() + ".log");
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.add("-XX:+UseSerialGC");
      cmd.add("-XX:TieredStopAtLevel=1");
      cmd.addAll(javaArgs);
      process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      LIVE.add(process);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  String output() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "";
    }
  }

  /** SIGKILL: no goodbye, no shutdown hook. */
  void kill9() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  /** SIGSTOP / SIGCONT: the process freezes with its sockets open. */
  void signal(String sig) throws IOException, InterruptedException {
    new ProcessBuilder("kill", "-" + sig, Long.toString(pid())).inheritIO().start().waitFor();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly();
      process.waitFor();
    }
  }

  /** The test JVM's classpath (surefire hides it behind a manifest jar). */
  static String testClasspath() {
    String cp = System.getProperty("surefire.test.class.path");
    return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
  }
}
