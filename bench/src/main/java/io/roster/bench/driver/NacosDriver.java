package io.roster.bench.driver;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.Event;
import com.alibaba.nacos.api.naming.listener.EventListener;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.Consumer;

/**
 * The {@code nacos} driver: {@code com.alibaba.nacos:nacos-client} 2.x against any Nacos 2.x
 * server, given as {@code --target host:8848} (the client finds the gRPC port at +1000 itself).
 * Each client is one {@link NamingService}, with its own gRPC connection. Nothing connects
 * until {@link #client} is called, so the driver can be built and its mapping tested without
 * a server.
 */
public final class NacosDriver implements Driver {

  /** Nacos' id of the default namespace. */
  static final String PUBLIC = "public";

  private final String target;
  private final String namespace;

  public NacosDriver(String target, String namespace) {
    this.target = target;
    this.namespace = namespace;
    // Keep nacos-client from installing its own logback configuration (and log files under
    // ~/logs/nacos): the load generator logs at WARN through its own logback.xml.
    System.setProperty("nacos.logging.default.config.enabled", "false");
  }

  @Override
  public String name() {
    return "nacos";
  }

  @Override
  public BenchClient client(String clientId) {
    try {
      return new NacosClient(NamingFactory.createNamingService(properties(target, namespace)));
    } catch (NacosException e) {
      throw new IllegalStateException("nacos client for " + target + ": " + e.getErrMsg(), e);
    }
  }

  @Override
  public String describeMassClients() {
    return "nacos-client NamingService instances (one gRPC connection and its own threads each)";
  }

  @Override
  public void close() {
    // Nothing shared.
  }

  /** The nacos-client settings for one client. */
  static Properties properties(String target, String namespace) {
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, target);
    if (namespace != null && !namespace.isEmpty() && !namespace.equals(PUBLIC)) {
      p.setProperty(PropertyKeyConst.NAMESPACE, namespace);
    }
    return p;
  }

  /** An endpoint as a default ephemeral Nacos instance (weight 1, healthy, enabled). */
  static Instance toNacos(Endpoint e) {
    Instance i = new Instance();
    i.setIp(e.ip());
    i.setPort(e.port());
    i.setWeight(1.0);
    i.setHealthy(true);
    i.setEnabled(true);
    i.setEphemeral(true);
    i.setClusterName("DEFAULT");
    return i;
  }

  /** The visible instances of a Nacos list: enabled ones, as endpoints, in the given order. */
  static List<Endpoint> fromNacos(List<Instance> instances) {
    List<Endpoint> out = new ArrayList<>(instances == null ? 0 : instances.size());
    if (instances != null) {
      for (Instance i : instances) {
        if (i.isEnabled()) {
          out.add(new Endpoint(i.getIp(), i.getPort()));
        }
      }
    }
    return out;
  }

  /** Adapts a workload listener to a Nacos {@link EventListener}: only NamingEvents count. */
  static EventListener listener(Consumer<List<Endpoint>> listener) {
    return (Event event) -> {
      if (event instanceof NamingEvent ne) {
        listener.accept(fromNacos(ne.getInstances()));
      }
    };
  }

  /** A {@link BenchClient} over one NamingService. */
  private static final class NacosClient implements BenchClient {
    private final NamingService naming;

    NacosClient(NamingService naming) {
      this.naming = naming;
    }

    @Override
    public void register(String service, Endpoint e) {
      run(() -> naming.registerInstance(service, toNacos(e)));
    }

    @Override
    public void deregister(String service, Endpoint e) {
      run(() -> naming.deregisterInstance(service, toNacos(e)));
    }

    @Override
    public void batchRegister(String service, List<Endpoint> endpoints) {
      List<Instance> list = new ArrayList<>(endpoints.size());
      endpoints.forEach(e -> list.add(toNacos(e)));
      run(() -> naming.batchRegisterInstance(service, "DEFAULT_GROUP", list));
    }

    @Override
    public List<Endpoint> query(String service) {
      try {
        return fromNacos(naming.getAllInstances(service, false));
      } catch (NacosException e) {
        throw new IllegalStateException(e.getErrMsg(), e);
      }
    }

    @Override
    public void subscribe(String service, Consumer<List<Endpoint>> listener) {
      run(() -> naming.subscribe(service, listener(listener)));
    }

    @Override
    public void close() {
      run(naming::shutDown);
    }

    private interface NacosCall {
      void run() throws NacosException;
    }

    private static void run(NacosCall call) {
      try {
        call.run();
      } catch (NacosException e) {
        throw new IllegalStateException(e.getErrCode() + " " + e.getErrMsg(), e);
      }
    }
  }
}
