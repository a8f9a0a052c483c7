package io.roster.it.legacy;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Register, subscribe, push and deregister with an old nacos-client 2.x against a server:
 * args {@code serverAddr timeoutMs}. Prints each step as it succeeds and {@code OK} at the
 * end (exit 0); prints {@code FAIL: ...} and exits 1 when a step does not happen in time.
 */
public final class LegacyNacosMain {

  private LegacyNacosMain() {}

  public static void main(String[] args) throws Exception {
    long timeoutMs = Long.parseLong(args[1]);
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, args[0]);
    NamingService first = NamingFactory.createNamingService(p);
    NamingService second = NamingFactory.createNamingService(p);
    NamingService consumer = NamingFactory.createNamingService(p);
    step("version " + com.alibaba.nacos.common.utils.VersionUtils.version);

    first.registerInstance("legacy", "10.0.11.1", 80);
    step("registered 10.0.11.1:80");
    AtomicReference<String> seen = new AtomicReference<>("");
    consumer.subscribe("legacy", e -> seen.set(((NamingEvent) e).getInstances().stream()
        .map(i -> i.getIp() + ":" + i.getPort()).sorted().collect(Collectors.joining(","))));
    await("subscriber sees 10.0.11.1:80", () -> seen.get().equals("10.0.11.1:80"), timeoutMs);

    Instance two = new Instance();
    two.setIp("10.0.11.2");
    two.setPort(80);
    two.setWeight(3.0);
    second.registerInstance("legacy", two);
    await("pushed 10.0.11.1:80,10.0.11.2:80", () -> seen.get().equals("10.0.11.1:80,10.0.11.2:80"), timeoutMs);
    List<Instance> all = consumer.getAllInstances("legacy");
    if (all.stream().noneMatch(i -> i.getIp().equals("10.0.11.2") && i.getWeight() == 3.0)) {
      fail("getAllInstances: " + all);
    }
    step("getAllInstances " + all.size());

    first.deregisterInstance("legacy", "10.0.11.1", 80);
    await("pushed deregistration: 10.0.11.2:80", () -> seen.get().equals("10.0.11.2:80"), timeoutMs);
    second.shutDown();
    await("pushed shutDown: empty", () -> seen.get().isEmpty(), timeoutMs);
    first.shutDown();
    consumer.shutDown();
    System.out.println("OK");
    System.exit(0);
  }

  private static void step(String what) {
    System.out.println("STEP " + what);
    System.out.flush();
  }

  private static void fail(String why) {
    System.out.println("FAIL: " + why);
    System.out.flush();
    System.exit(1);
  }

  /** Polls {@code done} every 20 ms until true, or fails after {@code timeoutMs}. */
  private static void await(String what, Supplier<Boolean> done, long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000;
    while (!done.get()) {
      if (System.nanoTime() > deadline) {
        fail(what + " not within " + timeoutMs + " ms");
      }
      Thread.sleep(20);
    }
    step(what);
  }
}
