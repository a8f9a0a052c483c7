package io.roster.bench;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One {@code nacosfirst} run's times, client's and server's, as the steps of its first register
 * → push (milliseconds each). The client's times are its own ({@link NacosFirst#main}); the
 * server's are the lines of its {@code roster.trace.nacos} logger for the connection that
 * registered.
 */
record Split(Map<String, Double> ms) {

  /** The steps, in order (each name once); the indented ones split the one above them. */
  static final List<String> STEPS = List.of(
      "client JVM start -> main",
      "NamingService created (connect, server check, setup)",
      "  client: create -> transport up",
      "  client: transport up -> ServerCheckRequest received",
      "  server: ServerCheckRequest received -> answered",
      "  client: server check answered -> ConnectionSetupRequest received",
      "  server: ConnectionSetupRequest received -> session open",
      "  client: session open -> NamingService returned",
      "subscribe: call -> returned",
      "  client: call -> SubscribeServiceRequest received",
      "  server: SubscribeServiceRequest received -> answered",
      "  client: answered -> subscribe returned",
      "register -> listener (client total)",
      "  client: call -> InstanceRequest received",
      "  server: InstanceRequest received -> applied",
      "  server: InstanceRequest received -> push written",
      "  client: push written -> listener",
      "  client: push written -> ack received",
      "register: call -> returned",
      "next register -> listener (client total)",
      "  next: client: call -> InstanceRequest received",
      "  next: server: InstanceRequest received -> applied",
      "  next: server: InstanceRequest received -> push written",
      "  next: client: push written -> listener");

  private static final Pattern LINE =
      Pattern.compile("conn=(\\S+) step=(\\S+) type=(\\S+)(?: rev=(\\S+))? at=(\\d+)");

  static Split of(Map<String, Long> client, List<String> serverLines) {
    Map<String, Map<String, Long>> byConn = new HashMap<>();
    Map<String, Map<String, Long>> lastByConn = new HashMap<>();
    Map<String, Map<String, Long>> pushedByConn = new HashMap<>();
    Map<String, Map<String, Long>> ackedByConn = new HashMap<>();
    for (String line : serverLines) {
      Matcher m = LINE.matcher(line);
      if (!m.find()) {
        continue;
      }
      String conn = m.group(1);
      long at = Long.parseLong(m.group(5));
      if (m.group(4) != null) {
        (m.group(2).equals("pushed") ? pushedByConn : ackedByConn).computeIfAbsent(conn, k -> new HashMap<>())
            .putIfAbsent(m.group(4), at);
      } else {
        byConn.computeIfAbsent(conn, k -> new HashMap<>()).putIfAbsent(m.group(2) + " " + m.group(3), at);
        lastByConn.computeIfAbsent(conn, k -> new HashMap<>()).put(m.group(2) + " " + m.group(3), at);
      }
    }
    String conn = byConn.entrySet().stream().filter(e -> e.getValue().containsKey("applied InstanceRequest"))
        .map(Map.Entry::getKey).findFirst()
        .orElseThrow(() -> new IllegalStateException("the server's log has no applied InstanceRequest"));
    Map<String, Long> s = byConn.get(conn);
    Map<String, Long> last = lastByConn.get(conn);
    Map<String, Long> pushed = pushedByConn.getOrDefault(conn, Map.of());
    List<String> revs = pushed.keySet().stream().sorted((a, b) -> Long.compare(Long.parseLong(a), Long.parseLong(b)))
        .toList();
    if (revs.size() < 3) {
      throw new IllegalStateException("the server's log has " + revs.size() + " pushes on " + conn
          + " (expected the subscription's and two registrations')");
    }
    String rev = revs.get(revs.size() - 2);
    long push = pushed.get(rev);
    long pushNext = pushed.get(revs.get(revs.size() - 1));
    long ack = ackedByConn.getOrDefault(conn, Map.of()).getOrDefault(rev, -1L);
    Map<String, Double> ms = new LinkedHashMap<>();
    put(ms, client.get("main"), client.get("jvm"));
    put(ms, client.get("created"), client.get("create"));
    put(ms, s.get("transport -"), client.get("create"));
    put(ms, s.get("received ServerCheckRequest"), s.get("transport -"));
    put(ms, s.get("answered ServerCheckRequest"), s.get("received ServerCheckRequest"));
    put(ms, s.get("received ConnectionSetupRequest"), s.get("answered ServerCheckRequest"));
    put(ms, s.get("answered ConnectionSetupRequest"), s.get("received ConnectionSetupRequest"));
    put(ms, client.get("created"), s.get("answered ConnectionSetupRequest"));
    put(ms, client.get("subscribed"), client.get("created"));
    put(ms, s.get("received SubscribeServiceRequest"), client.get("created"));
    put(ms, s.get("answered SubscribeServiceRequest"), s.get("received SubscribeServiceRequest"));
    put(ms, client.get("subscribed"), s.get("answered SubscribeServiceRequest"));
    put(ms, client.get("seen"), client.get("register"));
    put(ms, s.get("received InstanceRequest"), client.get("register"));
    put(ms, s.get("applied InstanceRequest"), s.get("received InstanceRequest"));
    put(ms, push, s.get("received InstanceRequest"));
    put(ms, client.get("seen"), push);
    put(ms, ack < 0 ? null : ack, push);
    put(ms, client.get("registered"), client.get("register"));
    put(ms, client.get("seenNext"), client.get("registerNext"));
    put(ms, last.get("received InstanceRequest"), client.get("registerNext"));
    put(ms, last.get("applied InstanceRequest"), last.get("received InstanceRequest"));
    put(ms, pushNext, last.get("received InstanceRequest"));
    put(ms, client.get("seenNext"), pushNext);
    return new Split(ms);
  }

  /** Adds the next step's figure (NaN when a time is missing). */
  private static void put(Map<String, Double> ms, Long to, Long from) {
    ms.put(STEPS.get(ms.size()), to == null || from == null ? Double.NaN : (to - from) / 1000.0);
  }

  /** One line: each step's figure, in order. */
  String line() {
    StringBuilder sb = new StringBuilder();
    ms.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : "; ").append(k.trim()).append(' ')
        .append(String.format("%.1f", v)));
    return sb.toString();
  }

  /** The lines of {@code file} from byte {@code offset} on. */
  static List<String> read(Path file, long offset) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
      f.seek(offset);
      byte[] rest = new byte[(int) (f.length() - offset)];
      f.readFully(rest);
      return List.of(new String(rest, StandardCharsets.UTF_8).split("\n", -1));
    }
  }
}
