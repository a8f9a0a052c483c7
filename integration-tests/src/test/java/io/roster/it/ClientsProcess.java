package io.roster.it;

import static org.awaitility.Awaitility.await;

import io.roster.server.testing.process.JavaProcess;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** {@link ClientsMain} in a child JVM: {@code count} clients, instances {@code ip:basePort..}. */
final class ClientsProcess extends JavaProcess {

  final String ip;
  final int basePort;
  final int count;

  ClientsProcess(String servers, String service, int count, String ip, int basePort) {
    super("clients-" + basePort, List.of("-Xmx96m", "-Xss512k", Timing.PROPERTY, "-cp", testClasspath(),
        ClientsMain.class.getName(), servers, service, Integer.toString(count), ip, Integer.toString(basePort)));
    this.ip = ip;
    this.basePort = basePort;
    this.count = count;
  }

  /** The instances its clients register, as "ip:port". */
  Set<String> instances() {
    Set<String> all = new LinkedHashSet<>();
    for (int k = 0; k < count; k++) {
      all.add(ip + ":" + (basePort + k));
    }
    return all;
  }

  ClientsProcess awaitRegistered() {
    await().atMost(Timing.seconds(60)).until(() -> {
      if (!isAlive()) {
        throw new IllegalStateException("clients exited:\n" + output());
      }
      return output().contains("REGISTERED");
    });
    return this;
  }
}
