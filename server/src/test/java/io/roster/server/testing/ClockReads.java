package io.roster.server.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds the places where a module's code reads a clock itself ({@code System.nanoTime},
 * {@code System.currentTimeMillis}, {@code Instant.now()}, {@code Clock.system…}), for the tests
 * that keep time injected in the server and the SDK.
 */
public final class ClockReads {

  private static final Pattern CLOCK_READ = Pattern.compile(
      "System\\s*(\\.|::)\\s*(nanoTime|currentTimeMillis)"
          + "|(Instant|LocalDateTime|ZonedDateTime|OffsetDateTime|LocalDate|LocalTime)\\s*(\\.\\s*now\\s*\\(|::\\s*now)"
          + "|Clock\\s*\\.\\s*system|new\\s+Date\\s*\\(\\s*\\)|import\\s+static\\s+java\\.lang\\.System\\.(nanoTime|currentTimeMillis|\\*)");

  private ClockReads() {}

  /**
   * "file:line: text" of every clock read in the Java files under {@code sources}, comments left
   * out, except in {@code seams} (paths under {@code sources}, e.g. {@code
   * io/roster/server/time/Deadline.java}).
   */
  public static List<String> in(Path sources, Set<String> seams) {
    if (!Files.isDirectory(sources)) {
      throw new IllegalArgumentException(sources.toAbsolutePath() + " is not a directory (run from the module's)");
    }
    List<String> found = new ArrayList<>();
    try (Stream<Path> files = Files.walk(sources)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        if (seams.contains(sources.relativize(f).toString().replace('\\', '/'))) {
          continue;
        }
        List<String> lines = Files.readAllLines(f);
        for (int i = 0; i < lines.size(); i++) {
          String code = lines.get(i).replaceFirst("(^|\\s)//.*$", "");
          if (!code.trim().startsWith("*") && CLOCK_READ.matcher(code).find()) {
            found.add(sources.relativize(f) + ":" + (i + 1) + ": " + lines.get(i).trim());
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found;
  }
}
