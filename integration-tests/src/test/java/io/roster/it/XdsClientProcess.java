package io.roster.it;

import io.roster.server.testing.process.JavaProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link XdsClientMain} in a child JVM whose only configuration is its xDS bootstrap file ({@code
 * -Dio.grpc.xds.bootstrap}) and the JVM flags given (a hosts file, say). Used from one test thread.
 */
final class XdsClientProcess extends JavaProcess {

  /** A client making {@code calls} calls on {@code target}, then exiting (or following, with {@code follow}). */
  XdsClientProcess(Path bootstrap, String target, int calls, boolean follow, String... jvmFlags) {
    super("xds-client", args(bootstrap, target, calls, follow, jvmFlags));
  }

  private static List<String> args(Path bootstrap, String target, int calls, boolean follow, String... jvmFlags) {
    List<String> args = new ArrayList<>(List.of("-Xmx64m", Timing.PROPERTY, "-Dio.grpc.xds.bootstrap=" + bootstrap));
    args.addAll(List.of(jvmFlags));
    args.addAll(List.of("-cp", testClasspath(), XdsClientMain.class.getName(), target, Integer.toString(calls)));
    if (follow) {
      args.add("follow");
    }
    return args;
  }

  /** Asks a following client for {@code n} more calls. */
  void call(int n) {
    try {
      process.getOutputStream().write((n + "\n").getBytes(StandardCharsets.UTF_8));
      process.getOutputStream().flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
