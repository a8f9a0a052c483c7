package io.roster.it;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * Programs some tests run that Java and Maven do not bring (Debian packages .ci/run installs): a
 * program is found at the path its environment variable names, or on the PATH. Where it is
 * absent the test is skipped, saying which package provides it, except in CI ({@code CI=true}),
 * where its absence is a failure.
 */
final class ExternalTools {

  private ExternalTools() {}

  /**
   * {@code program}, or the calling test is skipped (a failure in CI).
   *
   * @param variable an environment variable that may name the program's path instead
   * @param debianPackage the package that provides it, for the skip message
   * @param skipped what is skipped without it
   */
  static Path require(String program, String variable, String debianPackage, String skipped) {
    Optional<Path> found = find(program, variable);
    if (found.isEmpty() && "true".equals(System.getenv("CI"))) {
      throw new AssertionError(program + " is required in CI but is not on the PATH (.ci/run installs Debian's "
          + debianPackage + ")");
    }
    Assumptions.assumeTrue(found.isPresent(), program + " is absent (not on the PATH, nor at " + variable
        + "; Debian's `" + debianPackage + "` package provides it: apt-get install " + debianPackage + "): " + skipped);
    return found.get();
  }

  /** {@code program} at the path {@code variable} names, else on the PATH. */
  static Optional<Path> find(String program, String variable) {
    String explicit = System.getenv(variable);
    if (explicit != null && !explicit.isBlank()) {
      return Optional.of(Path.of(explicit)).filter(Files::isExecutable);
    }
    return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        .filter(p -> !p.isBlank()).map(p -> Path.of(p, program)).filter(Files::isExecutable).findFirst();
  }
}
