package io.roster.server.nacos;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.auth.Audit;
import io.roster.server.auth.Grant;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.http.HttpCallers;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.HttpResponse;
import io.roster.server.naming.Leases;
import io.roster.server.naming.LogLevels;
import io.roster.server.naming.LogText;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import java.util.function.IntSupplier;

/**
 * The operator's routes of the Nacos v1 open API ({@code /nacos/v1/ns/operator/...}), which
 * {@link NacosHttpApi} routes here: the server's status and counters, and the log levels.
 * Thread-safe; runs on the HTTP endpoint's worker threads.
 */
final class NacosOperator {

  /** The log level route's parameters, as its errors name them. */
  private static final LogLevels.Fields LOG_FIELDS = new LogLevels.Fields("logName", "logLevel");

  private final Registry registry;
  private final Leases leases;
  private final IntSupplier connections;
  private final HttpCallers callers;
  /** Whether this server serves its registry now, and is ready (what {@code operator/metrics} says). */
  private final Readiness readiness;

  NacosOperator(Registry registry, Leases leases, IntSupplier connections, HttpCallers callers, Readiness readiness) {
    this.registry = registry;
    this.leases = leases;
    this.connections = connections;
    this.callers = callers;
    this.readiness = readiness;
  }

  /**
   * GET /operator/metrics: {@code {"status":"UP"}} while the server is ready, else {@code DOWN}
   * (a probe: open to anyone, auth on or off; the readiness the gRPC health service reports),
   * and counters with {@code onlyStatus=false} (an admin of every namespace's).
   */
  HttpResponse metrics(HttpRequest r) {
    ObjectNode o = NacosMapping.JSON.createObjectNode();
    o.put("status", readiness.notReady() == null ? "UP" : "DOWN");
    if (Boolean.FALSE.equals(r.boolParam("onlyStatus"))) {
      callers.checkAll(r, Permission.ADMIN, Grant.ALL);
      int sessions = connections.getAsInt();
      o.put("serviceCount", registry.serviceCount());
      o.put("clientCount", sessions + leases.count());
      o.put("connectionBasedClientCount", sessions);
      o.put("ephemeralIpPortClientCount", leases.count());
      o.put("persistentIpPortClientCount", 0);
      o.put("responsibleClientCount", sessions + leases.count());
      o.put("load", java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
      Runtime rt = Runtime.getRuntime();
      o.put("mem", (double) (rt.totalMemory() - rt.freeMemory()) / rt.maxMemory());
    }
    return NacosHttpApi.json(o);
  }

  /** PUT /operator/log: sets the level of one of the server's loggers at runtime (logback). */
  HttpResponse logLevel(HttpRequest r) {
    Principal who = callers.checkAll(r, Permission.ADMIN, Grant.ALL);
    LogLevels.LoggerLevel set = LogLevels.set(LOG_FIELDS, r.required("logName"), r.required("logLevel"));
    Audit.log(who, "SetLogLevel(HTTP)", LogText.of(set.name()), "level=" + set.level(), "ok");
    return HttpResponse.text(200, "ok");
  }
}
