package io.roster.server.metrics;

import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The data directory's size and its file system's free and total space (docs/observability.md),
 * read at each scrape. Stateless; {@link ServerMetrics#dataDir} registers them once.
 */
@SuppressWarnings("LongDoubleConversion") // byte counts become Prometheus's doubles: exact up to 2^53
final class DataDirMetrics {

  private DataDirMetrics() {}

  /** Registers the gauges of {@code dir} in {@code prometheus}. */
  static void register(PrometheusRegistry prometheus, Path dir) throws IOException {
    FileStore store = Files.getFileStore(dir);
    GaugeWithCallback.builder().name("roster_data_dir_bytes")
        .help("Bytes of the files in the data directory (--data-dir): state file, journal, Raft log and snapshots")
        .callback(cb -> cb.call(bytesUnder(dir))).register(prometheus);
    spaceGauge(prometheus, "roster_data_dir_free_bytes",
        "Bytes the server may still write on the data directory's file system", store::getUsableSpace);
    spaceGauge(prometheus, "roster_data_dir_total_bytes", "The size of the data directory's file system",
        store::getTotalSpace);
  }

  /** Space of the data directory's file system, read at scrape; a read that fails leaves it out of that scrape. */
  private static void spaceGauge(PrometheusRegistry prometheus, String name, String help, SpaceReading reading) {
    GaugeWithCallback.builder().name(name).help(help).callback(cb -> {
      try {
        cb.call(reading.bytes());
      } catch (IOException e) {
        // not reported this scrape
      }
    }).register(prometheus);
  }

  /** A file system's space, in bytes. */
  private interface SpaceReading {
    long bytes() throws IOException;
  }

  /** The bytes of the regular files under {@code dir}; a file that goes while it is counted counts 0. */
  private static long bytesUnder(Path dir) {
    long[] bytes = {0};
    try {
      Files.walkFileTree(dir, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
          bytes[0] += attrs.isRegularFile() ? attrs.size() : 0;
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path file, IOException e) {
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      // what was counted stands
    }
    return bytes[0];
  }
}
