package io.roster.it;

import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import io.roster.server.testing.process.JavaProcess;
import java.util.List;
import java.util.Properties;

/**
 * A provider on the official nacos-client as its own process: registers one instance and waits
 * to be killed. Args: serverAddr service ip port cacheDir. Prints "REGISTERED" once registered.
 */
public final class NacosProviderMain {

  private NacosProviderMain() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("JM.SNAPSHOT.PATH", args[4]);
    System.setProperty("JM.LOG.PATH", args[4] + "/logs");
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, args[0]);
    NamingService naming = NamingFactory.createNamingService(p);
    naming.registerInstance(args[1], args[2], Integer.parseInt(args[3]));
    System.out.println("REGISTERED");
    System.out.flush();
    Thread.currentThread().join();
  }

  /** {@link NacosProviderMain} in a child JVM. */
  static final class Provider extends JavaProcess {

    Provider(String serverAddr, String service, String ip, int port, String cacheDir) {
      super("nacos-provider-" + port, List.of("-Xmx64m", Timing.PROPERTY, "-cp", testClasspath(),
          NacosProviderMain.class.getName(), serverAddr, service, ip, Integer.toString(port), cacheDir));
    }

    Provider awaitRegistered() {
      await().atMost(Timing.seconds(30)).until(() -> {
        if (!isAlive()) {
          throw new IllegalStateException("nacos provider exited:\n" + output());
        }
        return output().contains("REGISTERED");
      });
      return this;
    }
  }
}
