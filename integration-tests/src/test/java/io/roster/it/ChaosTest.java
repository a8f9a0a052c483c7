package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.server.config.ServerConfig;
import io.roster.server.testing.process.LocalCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Chaos against three real members with peer links through freezable proxies and
 * SDK clients in child JVMs (25 per JVM, each registering one instance). Random actions, one
 * every few seconds, from a seed that is printed: kill -9, SIGSTOP/SIGCONT, or SIGTERM of a
 * member and its restart with its data; a frozen peer link; and, meanwhile, kill -9 of a client
 * JVM (its instances must go) or the start of a new one. Half of the JVMs started first are
 * witnesses that are never killed, so that the flap count always covers at least that many
 * clients alive throughout. Never more than one member is disturbed at a time: each member
 * action ends with the member back and every member taking writes again. A subscriber
 * preferring each member records every listener event.
 *
 * <p>At the end everything is healed and, once quiet, every member's view must equal the live
 * truth (the instances of the client JVMs alive): 0 lost, 0 ghosts; and no subscriber may have
 * seen an event lacking an instance whose JVM lived throughout (0 flaps). The summary line
 * goes to stdout and to target/chaos-summary.txt, every flap to target/chaos-flaps.txt.
 *
 * <p>{@code make chaos} runs the long variant (200 clients, 10 minutes); the short one is part
 * of {@code make test}. {@code -Droster.chaos.duration=2m} and {@code -Droster.chaos.seed=N}
 * change the long one's duration and the seed of both.
 */
class ChaosTest {

  private static final String SERVICE = "chaos-svc";
  private static final String PROBE_SERVICE = "chaos-probe";
  private static final Path SUMMARY = Path.of("target", "chaos-summary.txt");

  @RegisterExtension
  final LocalClusterExtension local = new LocalClusterExtension();
  private final List<ClientsProcess> jvms = new ArrayList<>();
  private final Map<String, Integer> actions = new TreeMap<>();
  private LocalCluster cluster;
  private Random random;
  private int nextJvm;
  private int perJvm;
  /** The JVMs started first that are never killed: their clients live throughout. */
  private int witnesses;

  /**
   * The short variant, in make test: 60 clients, about 25 s of the same chaos (SIGSTOP included
   * since a member frozen and let go holds its sessions' ends, {@link PausedLeaderTest}).
   */
  @Test
  void shortChaosLosesNothingAndFlapsNothing() throws Exception {
    run(3, 20, Duration.ofSeconds(25));
  }

  /** The long variant ({@code make chaos}): 200 clients, 10 minutes unless told otherwise. */
  @Test
  @Tag("chaos")
  void chaosLosesNothingAndFlapsNothing() throws Exception {
    run(8, 25, ServerConfig.parseDuration(System.getProperty("roster.chaos.duration", "10m")));
  }

  private void run(int jvmCount, int clientsPerJvm, Duration duration) throws Exception {
    long seed = Long.getLong("roster.chaos.seed", System.nanoTime());
    random = new Random(seed);
    perJvm = clientsPerJvm;
    witnesses = jvmCount / 2;
    System.out.printf("chaos: seed %d, %d x %d clients, %s%n", seed, jvmCount, clientsPerJvm, duration);
    cluster = local.startWithLinks();
    for (int j = 0; j < jvmCount; j++) {
      startJvm();
    }
    jvms.forEach(ClientsProcess::awaitRegistered);
    List<EventLog> subscribers = new ArrayList<>();
    for (int m = 0; m < cluster.size(); m++) {
      RosterClient c = RosterClient.builder().serverAddresses(cluster.servers(m)).clientId("sub-" + m)
          .requestTimeout(Timing.seconds(10)).build();
      local.closing(c);
      subscribers.add(EventLog.subscribe("subscriber on member " + m, c, SERVICE));
    }
    Set<String> initial = truth();
    await().atMost(Timing.seconds(30)).until(() -> subscribers.stream().allMatch(s -> s.latest().equals(initial)));
    subscribers.forEach(EventLog::arm);
    List<ClientsProcess> throughout = List.copyOf(jvms);

    long t0 = System.nanoTime();
    long end = t0 + duration.toNanos();
    while (System.nanoTime() < end) {
      memberAction();
      pauseBetweenActions();
    }
    long chaosMs = (System.nanoTime() - t0) / 1_000_000;

    // Quiet: every link healed, every member up (each action already brought its member back);
    // JVMs started last have registered.
    cluster.heal();
    for (ClientsProcess p : jvms) {
      if (p.isAlive()) {
        p.awaitRegistered();
      }
    }
    Set<String> truth = truth();
    List<String> expected = List.copyOf(truth);
    List<List<String>> views = new ArrayList<>();
    try {
      // A killed client's session ends within the server's keepalive (4 s + 5 s), its member's
      // owners within member-down-after + member-grace (3 s + 10 s).
      await("every member's view equals the live truth").atMost(Timing.seconds(60)).pollInterval(Duration.ofMillis(500))
          .until(() -> {
            views.clear();
            views.addAll(cluster.views(SERVICE));
            return views.stream().allMatch(expected::equals);
          });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      // Counted below.
    }
    Set<String> lost = new TreeSet<>();
    Set<String> ghosts = new TreeSet<>();
    for (List<String> v : views) {
      Set<String> seen = v == null ? Set.of() : new TreeSet<>(v);
      truth.stream().filter(i -> !seen.contains(i)).forEach(lost::add);
      seen.stream().filter(i -> !truth.contains(i)).forEach(ghosts::add);
    }
    Set<String> alwaysLive = new TreeSet<>();
    throughout.stream().filter(ClientsProcess::isAlive).forEach(p -> alwaysLive.addAll(p.instances()));
    List<String> flaps = new ArrayList<>();
    subscribers.forEach(s -> flaps.addAll(s.flaps(alwaysLive)));
    int total = actions.values().stream().mapToInt(Integer::intValue).sum();
    String summary = String.format("chaos summary: seed %d, %d s of chaos, %d actions %s, %d live instances "
        + "(%d of JVMs alive throughout), lost %d, ghosts %d, flaps %d", seed, chaosMs / 1000, total, actions,
        truth.size(), alwaysLive.size(), lost.size(), ghosts.size(), flaps.size());
    System.out.println(summary);
    Files.createDirectories(SUMMARY.getParent());
    Files.writeString(SUMMARY, summary + "\n");
    Files.write(SUMMARY.resolveSibling("chaos-flaps.txt"), flaps); // every one, with its wall-clock time

    assertThat(lost).as("%s; lost per member views %s", summary, views.stream().map(v -> v == null ? -1 : v.size()).toList())
        .isEmpty();
    assertThat(ghosts).as(summary).isEmpty();
    assertThat(flaps).as(EventLog.describe(flaps)).isEmpty();
  }

  // --- Actions ---

  private void memberAction() throws Exception {
    int m = random.nextInt(cluster.size());
    Duration hold = Duration.ofMillis(1000 + random.nextInt(5000));
    int action = random.nextInt(4);
    switch (action) {
      case 0 -> {
        count("kill9-member", "member " + m + " for " + hold.toMillis() + " ms");
        cluster.node(m).kill9();
        meanwhile(hold);
        cluster.restart(m);
      }
      case 1 -> {
        count("sigstop-member", "member " + m + " for " + hold.toMillis() + " ms");
        cluster.node(m).signal("STOP");
        meanwhile(hold);
        cluster.node(m).signal("CONT");
      }
      case 2 -> {
        count("sigterm-restart-member", "member " + m + " for " + hold.toMillis() + " ms");
        cluster.node(m).stop();
        meanwhile(hold);
        cluster.restart(m);
      }
      default -> {
        int other = (m + 1 + random.nextInt(cluster.size() - 1)) % cluster.size();
        count("freeze-link", m + "-" + other + " for " + hold.toMillis() + " ms");
        cluster.freeze(m, other);
        meanwhile(hold);
        cluster.heal();
      }
    }
    awaitEveryMemberWritable();
  }

  /** While a member is disturbed: maybe a client action, then the rest of the hold. */
  private void meanwhile(Duration hold) {
    long until = System.nanoTime() + hold.toNanos();
    if (random.nextBoolean()) {
      clientAction();
    }
    waitUntil(until);
  }

  private void pauseBetweenActions() {
    if (random.nextInt(3) == 0) {
      clientAction();
    }
    waitUntil(System.nanoTime() + 1_000_000L * (500 + random.nextInt(2500)));
  }

  private void clientAction() {
    List<ClientsProcess> killable = jvms.subList(witnesses, jvms.size()).stream().filter(ClientsProcess::isAlive).toList();
    if (random.nextBoolean() && !killable.isEmpty()) {
      ClientsProcess victim = killable.get(random.nextInt(killable.size()));
      count("kill9-client-jvm", "clients-" + victim.basePort);
      try {
        victim.kill9();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    } else {
      startJvm();
      count("start-client-jvm", "clients-" + jvms.get(jvms.size() - 1).basePort);
    }
  }

  private void startJvm() {
    ClientsProcess p = new ClientsProcess(cluster.servers(0), SERVICE, perJvm, "10.0.5.1", 20_000 + 100 * nextJvm++);
    local.closing(p);
    jvms.add(p);
  }

  /**
   * Until each member takes a write: a probe client pinned to it registers an instance (its
   * close removes it). A cut-off or catching-up member refuses, so this is the end of a
   * disturbance, and the next one may start.
   */
  private void awaitEveryMemberWritable() {
    for (int m = 0; m < cluster.size(); m++) {
      int member = m;
      await("member " + m + " takes writes").atMost(Timing.seconds(60)).pollInterval(Duration.ofMillis(200))
          .ignoreExceptions().untilAsserted(() -> {
            try (RosterClient probe = RosterClient.builder().serverAddresses(cluster.address(member))
                .clientId("probe-" + member).pollEnabled(false).drainTimeout(Duration.ZERO)
                .requestTimeout(Duration.ofSeconds(2)).build()) {
              probe.registerInstance(PROBE_SERVICE, Instance.of("10.9.9.9", 1000 + member));
            }
          });
    }
  }

  /**
   * The chaos's own pacing: the test holds a disturbance for a while on purpose; nothing is
   * awaited here (Awaitility bounds every wait for an outcome).
   */
  private static void waitUntil(long nanos) {
    long left;
    while ((left = nanos - System.nanoTime()) > 0) {
      java.util.concurrent.locks.LockSupport.parkNanos(left);
    }
  }

  private void count(String action, String detail) {
    actions.merge(action, 1, Integer::sum);
    System.out.printf("chaos: %tT.%<tL %s %s%n", System.currentTimeMillis(), action, detail);
  }

  /** The instances of the client JVMs alive now. */
  private Set<String> truth() {
    Set<String> t = new TreeSet<>();
    jvms.stream().filter(ClientsProcess::isAlive).forEach(p -> t.addAll(p.instances()));
    return t;
  }
}
