package io.roster.it.nacos3;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.exception.NacosException;
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
 * nacos-client 3.x against a server: args {@code serverAddr timeoutMs MODE [username password]}.
 * MODE {@code works}: register, subscribe, the push of a second registration, query, list,
 * deregister and shutDown, each seen by its subscriber; a persistent instance ({@code ephemeral=false})
 * that outlives its client until another deregisters it. MODE {@code refused}: a registration is
 * refused with 403 (no or wrong credentials on a server with auth on). Prints each step as it
 * succeeds and {@code OK} at the end (exit 0); prints {@code FAIL: ...} and exits 1 otherwise.
 */
public final class Nacos3Main {

  private Nacos3Main() {}

  public static void main(String[] args) throws Exception {
    long timeoutMs = Long.parseLong(args[1]);
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, args[0]);
    if (args.length > 4) {
      p.setProperty(PropertyKeyConst.USERNAME, args[3]);
      p.setProperty(PropertyKeyConst.PASSWORD, args[4]);
    }
    step("version " + com.alibaba.nacos.common.utils.VersionUtils.version);
    if (args[2].equals("refused")) {
      refused(p);
    } else {
      works(p, timeoutMs);
    }
    System.out.println("OK");
    System.exit(0);
  }

  private static void refused(Properties p) throws NacosException {
    NamingService client = NamingFactory.createNamingService(p);
    try {
      client.registerInstance("nacos3-refused", "10.0.13.1", 80);
      fail("registerInstance was accepted");
    } catch (NacosException e) {
      if (e.getErrCode() != NacosException.NO_RIGHT) {
        fail("registerInstance: errCode " + e.getErrCode() + " (expected 403): " + e.getErrMsg());
      }
      step("registerInstance refused 403: " + e.getErrMsg());
    }
    client.shutDown();
  }

  private static void works(Properties p, long timeoutMs) throws Exception {
    NamingService first = NamingFactory.createNamingService(p);
    NamingService second = NamingFactory.createNamingService(p);
    NamingService consumer = NamingFactory.createNamingService(p);

    first.registerInstance("nacos3", "10.0.13.1", 80);
    step("registered 10.0.13.1:80");
    AtomicReference<String> seen = new AtomicReference<>("");
    consumer.subscribe("nacos3", e -> seen.set(((NamingEvent) e).getInstances().stream()
        .map(i -> i.getIp() + ":" + i.getPort()).sorted().collect(Collectors.joining(","))));
    await("subscriber sees 10.0.13.1:80", () -> seen.get().equals("10.0.13.1:80"), timeoutMs);

    Instance two = new Instance();
    two.setIp("10.0.13.2");
    two.setPort(80);
    two.setWeight(3.0);
    second.registerInstance("nacos3", two);
    await("pushed 10.0.13.1:80,10.0.13.2:80", () -> seen.get().equals("10.0.13.1:80,10.0.13.2:80"), timeoutMs);
    List<Instance> all = consumer.getAllInstances("nacos3", false);
    if (all.stream().noneMatch(i -> i.getIp().equals("10.0.13.2") && i.getWeight() == 3.0)) {
      fail("getAllInstances: " + all);
    }
    step("getAllInstances " + all.size());
    List<String> services = consumer.getServicesOfServer(1, 100).getData();
    if (!services.contains("nacos3")) {
      fail("getServicesOfServer: " + services);
    }
    step("getServicesOfServer " + services);
    // A persistent instance (PersistentInstanceRequest): it outlives the client that registered it.
    Instance db = new Instance();
    db.setIp("10.0.13.9");
    db.setPort(5432);
    db.setEphemeral(false);
    first.registerInstance("nacos3-db", db);
    AtomicReference<String> seenDb = new AtomicReference<>("");
    consumer.subscribe("nacos3-db", e -> seenDb.set(((NamingEvent) e).getInstances().stream()
        .map(i -> i.getIp() + ":" + i.getPort() + (i.isEphemeral() ? "" : " persistent")).sorted()
        .collect(Collectors.joining(","))));
    await("persistent 10.0.13.9:5432", () -> seenDb.get().equals("10.0.13.9:5432 persistent"), timeoutMs);
    // Nacos 3's fuzzy watch: Roster does not advertise it (docs/nacos-compat.md).
    try {
      java.util.concurrent.Future<?> keys = consumer.fuzzyWatchWithServiceKeys("nacos*",
          new com.alibaba.nacos.api.naming.listener.FuzzyWatchEventWatcher() {
            @Override
            public void onEvent(com.alibaba.nacos.api.naming.listener.FuzzyWatchChangeEvent event) {
              step("fuzzyWatch event " + event);
            }

            @Override
            public java.util.concurrent.Executor getExecutor() {
              return null;
            }
          });
      step("fuzzyWatch keys " + keys.get(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS));
    } catch (Exception e) {
      Throwable cause = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
      step("fuzzyWatch refused " + cause.getClass().getSimpleName() + ": " + cause.getMessage());
    }

    first.deregisterInstance("nacos3", "10.0.13.1", 80);
    await("pushed deregistration: 10.0.13.2:80", () -> seen.get().equals("10.0.13.2:80"), timeoutMs);
    second.shutDown();
    await("pushed shutDown: empty", () -> seen.get().isEmpty(), timeoutMs);
    first.shutDown();
    if (consumer.getAllInstances("nacos3-db", false).size() != 1) {
      fail("the persistent instance left with its client: " + consumer.getAllInstances("nacos3-db", false));
    }
    step("persistent outlives its client");
    consumer.deregisterInstance("nacos3-db", db);
    await("persistent deregistered", () -> seenDb.get().isEmpty(), timeoutMs);
    consumer.shutDown();
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
