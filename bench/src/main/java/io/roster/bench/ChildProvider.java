package io.roster.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** {@link ProviderMain} as a child JVM, on the load generator's own classpath. */
final class ChildProvider implements AutoCloseable {

  static final List<String> JVM_FLAGS = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx128m");

  private final Process process;
  private final CompletableFuture<Void> registered = new CompletableFuture<>();
  private final StringBuilder output = new StringBuilder();

  ChildProvider(String driver, String target, String service, String ip, int port) {
    List<String> cmd = java(ProviderMain.class, driver, target, service, ip, Integer.toString(port));
    try {
      process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), java.nio.charset.StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          synchronized (output) {
            output.append(line).append('\n');
          }
          if (line.equals("REGISTERED")) {
            registered.complete(null);
          }
        }
      } catch (IOException ignored) {
        // the process is gone
      }
      registered.completeExceptionally(new IllegalStateException("provider exited: " + output()));
    }, "child-provider-reader");
    reader.setDaemon(true);
    reader.start();
  }

  /** The command that runs {@code main} in a child JVM on this classpath, with {@link #JVM_FLAGS}. */
  static List<String> java(Class<?> main, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(JVM_FLAGS);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    cmd.addAll(List.of(args));
    return cmd;
  }

  void awaitRegistered(long seconds) throws Exception {
    registered.get(seconds, TimeUnit.SECONDS);
  }

  String output() {
    synchronized (output) {
      return output.toString();
    }
  }

  /** SIGKILL: no goodbye. Returns once the process is gone. */
  void kill9() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  /** SIGSTOP: frozen with its sockets open. */
  void freeze() throws IOException, InterruptedException {
    new ProcessBuilder("kill", "-STOP", Long.toString(process.pid())).inheritIO().start().waitFor();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      kill9();
    }
  }
}
