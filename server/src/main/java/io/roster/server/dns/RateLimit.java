package io.roster.server.dns;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Response rate limiting of the DNS port's UDP answers per source ({@code --dns-rate-limit},
 * docs/dns.md, decision 95), as BIND's RRL counts them: per IPv4 /24 or IPv6 /56, so that one
 * forged source cannot aim the port's answers at a network. Owns a token bucket per prefix, that
 * many responses a second with a burst of as many, in a Caffeine cache bounded to {@value
 * #MAX_PREFIXES} prefixes, each forgotten (full again) after {@value #FORGET_S} s unused.
 *
 * <p>Over the limit a response is either dropped or sent truncated and empty ({@link
 * Verdict#SLIP}, every second one, the first included): a real client behind the prefix asks
 * again over TCP, which a forged source cannot, and the slip is no larger than the query.
 *
 * <p>Thread-safe; time is the injected clock's.
 */
final class RateLimit {

  static final int MAX_PREFIXES = 65_536;
  static final int FORGET_S = 10;

  /** What becomes of a response. */
  enum Verdict {
    ANSWER,
    SLIP,
    DROP
  }

  private final double perNano;
  private final double burst;
  private final LongSupplier nanoTime;
  private final Cache<Long, Bucket> buckets;

  /** @param perSecond responses a second per prefix, at least 1 */
  RateLimit(int perSecond, LongSupplier nanoTime) {
    if (perSecond < 1) {
      throw new IllegalArgumentException("perSecond: " + perSecond + " (expected: >= 1)");
    }
    this.perNano = perSecond / 1e9;
    this.burst = perSecond;
    this.nanoTime = nanoTime;
    this.buckets = Caffeine.newBuilder().maximumSize(MAX_PREFIXES).expireAfterAccess(Duration.ofSeconds(FORGET_S))
        .ticker(nanoTime::getAsLong).executor(Runnable::run).build();
  }

  /** Takes a response from {@code source}'s bucket. */
  Verdict admit(InetAddress source) {
    long now = nanoTime.getAsLong();
    return buckets.get(prefix(source), k -> new Bucket(burst, now)).take(now, perNano, burst);
  }

  /** The source's /24 (IPv4) or /56 (IPv6), as one number; the two never meet. */
  static long prefix(InetAddress source) {
    byte[] a = source.getAddress();
    if (source instanceof Inet4Address) {
      return ((a[0] & 0xffL) << 16) | ((a[1] & 0xffL) << 8) | (a[2] & 0xffL);
    }
    long p = 1L << 60;
    for (int i = 0; i < 7; i++) {
      p |= (a[i] & 0xffL) << (8 * (6 - i));
    }
    return p;
  }

  /** One prefix's tokens. */
  private static final class Bucket {
    private double tokens;
    private long last;
    private long limited;

    Bucket(double tokens, long now) {
      this.tokens = tokens;
      this.last = now;
    }

    synchronized Verdict take(long now, double perNano, double burst) {
      tokens = Math.min(burst, tokens + Math.max(0, now - last) * perNano);
      last = now;
      if (tokens >= 1) {
        tokens -= 1;
        return Verdict.ANSWER;
      }
      return limited++ % 2 == 0 ? Verdict.SLIP : Verdict.DROP;
    }
  }
}
