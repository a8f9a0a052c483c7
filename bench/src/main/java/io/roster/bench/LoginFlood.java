package io.roster.bench;

import io.roster.server.auth.Passwords;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * logins: what password guessing from a host costs the legitimate clients of that same host. A
 * server with auth on (users {@code app} and {@code ops}, one static token) and its HTTP port;
 * from 127.0.0.1, one thread logs {@code app} in every 200 ms and another sends a GET of the
 * Nacos instance list with the static token every 20 ms, for {@code --logins-seconds} each:
 * first alone, then beside {@code --logins-guessers} threads that post logins with wrong
 * passwords as fast as they are answered, for other usernames (a new one each time), then for
 * {@code app} itself. {@code app} logged in once before the guessing starts, as an application
 * that started earlier has. Reports each phase's valid logins (latency and statuses), the token's
 * GETs, the guesses' statuses and the server's CPU. The guessers run in the bench's JVM, on the
 * same two cores as the server and the measured threads.
 */
final class LoginFlood {

  private static final String PASSWORD = "the password of the bench app";

  private LoginFlood() {}

  static Result run(Args args, Path jar, Path logDir) throws Exception {
    int seconds = args.size("logins-seconds");
    int guessers = args.size("logins-guessers");
    Result r = new Result("logins", String.format("Password guessing from the clients' own host: a valid login every "
        + "200 ms and a static-token GET every 20 ms, %d s alone, then beside %d guessing threads on other usernames, "
        + "then on the valid login's own username", seconds, guessers));
    Path dir = Files.createDirectories(logDir.resolve("logins-auth"));
    Path file = dir.resolve("auth.json");
    Files.deleteIfExists(file);
    String token = authFile(file);
    int port = Ports.freeForNacos();
    ServerProcess server = LocalServer.launcher(jar, args.serverJvm, logDir).launch("logins-server", "127.0.0.1", port,
        List.of(), List.of("--http-port", "auto", "--auth-file", file.toString())).serving();
    String base = "http://127.0.0.1:" + (port - 1000);
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    try {
      // Warm-up, unmeasured: the JIT of both JVMs, and app's first login from this host.
      for (int i = 0; i < 10; i++) {
        login(http, base, "app", PASSWORD);
        get(http, base, token);
      }
      List<Phase> phases = new ArrayList<>();
      phases.add(measure(http, base, token, seconds, 0, null, server));
      phases.add(measure(http, base, token, seconds, guessers, "other", server));
      phases.add(measure(http, base, token, seconds, guessers, "app", server));
      Stats alone = Stats.ofNanosAsMillis(phases.get(0).tokenGets);
      for (Phase p : phases) {
        String when = p.guessing == null ? "alone" : p.guessing.equals("other")
            ? guessers + " guessers, other usernames" : guessers + " guessers, the same username";
        Stats logins = Stats.ofNanosAsMillis(p.validLogins);
        Stats gets = Stats.ofNanosAsMillis(p.tokenGets);
        if (p.guessing != null && p.guessing.equals("other")) {
          r.row("valid login, " + when, logins.format("ms") + "; " + p.loginStatuses, "p99 <= 200 ms",
              logins.p99() <= 200 && p.loginStatuses.keySet().equals(java.util.Set.of(200)));
        } else {
          r.row("valid login, " + when, logins.format("ms") + "; " + p.loginStatuses);
        }
        if (p.guessing == null) {
          r.row("static-token GET, " + when, gets.format("ms") + "; " + p.getStatuses);
        } else {
          double ratio = gets.p99() / alone.p99();
          r.row("static-token GET, " + when, gets.format("ms") + "; " + p.getStatuses
              + String.format("; p99 %.2f x alone", ratio), "p99 <= 2 x alone", ratio <= 2);
          r.row("guesses, " + when, String.format("%d (%.0f/s): %s", p.guesses(), p.guesses() / (double) seconds,
              p.guessStatuses));
        }
        r.row("server CPU, " + when, String.format("%.2f s in %d s", p.serverCpuMillis / 1000.0, seconds));
      }
    } finally {
      server.close();
    }
    return r;
  }

  /** One phase's samples: nanoseconds of the valid logins and of the token's GETs, and statuses. */
  private static final class Phase {
    final String guessing;
    final List<Long> validLogins = new ArrayList<>();
    final List<Long> tokenGets = new ArrayList<>();
    final Map<Integer, Integer> loginStatuses = new TreeMap<>();
    final Map<Integer, Integer> getStatuses = new TreeMap<>();
    final Map<Integer, Integer> guessStatuses = new TreeMap<>();
    long serverCpuMillis;

    Phase(String guessing) {
      this.guessing = guessing;
    }

    synchronized int guesses() {
      return guessStatuses.values().stream().mapToInt(Integer::intValue).sum();
    }

    synchronized void guessed(int status) {
      guessStatuses.merge(status, 1, Integer::sum);
    }
  }

  private static Phase measure(HttpClient http, String base, String token, int seconds, int guessers,
      String guessing, ServerProcess server) throws Exception {
    Phase p = new Phase(guessing);
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < guessers; i++) {
      int n = i;
      Thread t = new Thread(() -> {
        HttpClient own = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        for (int k = 0; !stop.get(); k++) {
          String user = guessing.equals("other") ? "guess-" + n + "-" + k : guessing;
          try {
            p.guessed(login(own, base, user, "wrong password " + k).statusCode());
          } catch (IOException e) {
            p.guessed(-1);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "bench-guesser-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
    threads.forEach(Thread::start);
    long cpu0 = server.cpuMillis();
    Thread gets = new Thread(() -> {
      long end = System.nanoTime() + seconds * 1_000_000_000L;
      while (System.nanoTime() < end) {
        long t0 = System.nanoTime();
        try {
          int status = get(http, base, token).statusCode();
          synchronized (p) {
            p.tokenGets.add(System.nanoTime() - t0);
            p.getStatuses.merge(status, 1, Integer::sum);
          }
        } catch (IOException e) {
          synchronized (p) {
            p.getStatuses.merge(-1, 1, Integer::sum);
          }
        } catch (InterruptedException e) {
          return;
        }
        LockSupport.parkNanos(20_000_000L);
      }
    }, "bench-token-gets");
    gets.start();
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    while (System.nanoTime() < end) {
      long t0 = System.nanoTime();
      int status;
      try {
        status = login(http, base, "app", PASSWORD).statusCode();
      } catch (IOException e) {
        status = -1;
      }
      synchronized (p) {
        p.validLogins.add(System.nanoTime() - t0);
        p.loginStatuses.merge(status, 1, Integer::sum);
      }
      LockSupport.parkNanos(200_000_000L);
    }
    gets.join();
    p.serverCpuMillis = server.cpuMillis() - cpu0;
    stop.set(true);
    for (Thread t : threads) {
      t.join(15_000);
    }
    return p;
  }

  private static HttpResponse<String> login(HttpClient http, String base, String user, String password)
      throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(URI.create(base + "/nacos/v1/auth/users/login?username=" + user))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString("password=" + URLEncoder.encode(password, StandardCharsets.UTF_8)))
        .timeout(Duration.ofSeconds(30)).build(), BodyHandlers.ofString());
  }

  private static HttpResponse<String> get(HttpClient http, String base, String token)
      throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(URI.create(base + "/nacos/v1/ns/instance/list?serviceName=bench&accessToken="
        + URLEncoder.encode(token, StandardCharsets.UTF_8))).timeout(Duration.ofSeconds(30)).build(),
        BodyHandlers.ofString());
  }

  /** The workload's auth file: users app and ops, and a static token; returns the token. */
  private static String authFile(Path file) throws IOException {
    String token = "rst_" + Passwords.randomSecret(32);
    Files.writeString(file, "{\"version\": 1, \"tokenSecret\": \"" + Passwords.randomSecret(32) + "\",\n"
        + " \"users\": [\n"
        + "  {\"name\": \"app\", \"password\": \"" + Passwords.hash(PASSWORD) + "\", \"grants\": [{\"permission\": "
        + "\"write\", \"namespace\": \"public\"}]},\n"
        + "  {\"name\": \"ops\", \"password\": \"" + Passwords.hash(PASSWORD) + "\", \"grants\": [{\"permission\": "
        + "\"admin\", \"namespace\": \"*\"}]}],\n"
        + " \"tokens\": [{\"name\": \"bench\", \"sha256\": \"" + Passwords.sha256(token) + "\", \"grants\": "
        + "[{\"permission\": \"admin\", \"namespace\": \"*\"}]}]}\n");
    return token;
  }
}
