package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.server.testing.process.JavaProcess;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The oldest nacos-client 2.x that resolves here (2.0.0, module nacos-legacy-client) against a
 * Roster server process: register, subscribe, the push of a second registration, query,
 * deregister and shutDown, each seen by its subscriber. The program runs in a child JVM on the
 * module's own classpath (one test classpath cannot hold two nacos-client versions).
 */
class NacosLegacyClientTest {

  private static final Path LEGACY = Path.of(System.getProperty("roster.nacos.legacy.dir",
      "../nacos-legacy-client/target"));

  @Test
  void theOldestNacosClient2RegistersSubscribesIsPushedAndDeregisters() throws Exception {
    Path classpathFile = LEGACY.resolve("legacy-classpath.txt");
    assertThat(classpathFile).as("built by module nacos-legacy-client (mvn package)").exists();
    String classpath = LEGACY.resolve("classes") + java.io.File.pathSeparator + Files.readString(classpathFile).trim();
    Path cache = Files.createTempDirectory("nacos-legacy-cache");
    int port = Ports.freeForNacos();
    try (ServerProcess server = ServerProcess.start("127.0.0.1", port);
        Legacy client = new Legacy(classpath, "127.0.0.1:" + (port - 1000), cache)) {
      await().atMost(Timing.seconds(60)).until(() -> !client.isAlive());
      assertThat(client.output()).as(client.output()).contains("STEP version 2.0.0").contains("\nOK");
      assertThat(client.process.exitValue()).isZero();
    }
  }

  /** LegacyNacosMain in a child JVM on the old client's classpath. */
  private static final class Legacy extends JavaProcess {
    Legacy(String classpath, String serverAddr, Path cache) throws IOException {
      super("nacos-legacy", List.of("-Xmx96m", "-DJM.SNAPSHOT.PATH=" + cache, "-DJM.LOG.PATH=" + cache.resolve("logs"),
          "-cp", classpath, "io.roster.it.legacy.LegacyNacosMain", serverAddr,
          Long.toString(Timing.seconds(20).toMillis())));
    }
  }
}
