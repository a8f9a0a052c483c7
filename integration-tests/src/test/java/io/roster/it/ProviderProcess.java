package io.roster.it;

import static org.awaitility.Awaitility.await;

import io.roster.server.testing.process.JavaProcess;
import java.util.List;

/** {@link ProviderMain} in a child JVM. */
final class ProviderProcess extends JavaProcess {

  ProviderProcess(String servers, String service, String ip, int port) {
    super("provider-" + port, List.of("-Xmx64m", Timing.PROPERTY, "-cp", testClasspath(), ProviderMain.class.getName(),
        servers, service, ip, Integer.toString(port)));
  }

  /** Also subscribes to {@code subscribeTo}; "REGISTERED" then means subscribed too. */
  ProviderProcess(String servers, String service, String ip, int port, String subscribeTo) {
    super("provider-" + port, List.of("-Xmx64m", Timing.PROPERTY, "-cp", testClasspath(), ProviderMain.class.getName(),
        servers, service, ip, Integer.toString(port), subscribeTo));
  }

  ProviderProcess awaitRegistered() {
    await().atMost(Timing.seconds(30)).until(() -> {
      if (!isAlive()) {
        throw new IllegalStateException("provider exited:\n" + output());
      }
      return output().contains("REGISTERED");
    });
    return this;
  }
}
