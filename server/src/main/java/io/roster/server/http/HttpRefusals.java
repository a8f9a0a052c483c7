package io.roster.server.http;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ObjLongConsumer;

/**
 * What the HTTP port refused before any route saw a request, by reason, for the server's metrics
 * ({@code roster_http_refusals_total}): what Jetty could not parse or found too large, a body
 * over the limit, a connection cut because its request arrived too slowly. The reasons are a
 * fixed set, each counted from zero.
 *
 * <p>Thread-safe; counting is a {@link LongAdder} increment.
 */
public final class HttpRefusals {

  /** Why a request was refused. */
  public enum Reason {
    /** 413: a body over the limit. */
    TOO_LARGE(413),
    /** 414: a request line over Jetty's bound. */
    URI_TOO_LONG(414),
    /** 431: headers over Jetty's bound. */
    HEADERS_TOO_LARGE(431),
    /** 400: a request Jetty cannot parse, or whose path is ambiguous. */
    BAD_REQUEST(400),
    /** The connection was closed: its request took longer than {@code --http-request-timeout} to arrive. */
    SLOW(0),
    /** Any other status Jetty answered by itself (505, 501 for a transfer coding it does not know, ...). */
    OTHER(0);

    private final int status;

    Reason(int status) {
      this.status = status;
    }

    /** The value of the {@code reason} label. */
    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The reason of a refusal answered with {@code status}. */
    static Reason of(int status) {
      for (Reason r : values()) {
        if (r.status == status) {
          return r;
        }
      }
      return OTHER;
    }
  }

  private final Map<Reason, LongAdder> counts = new EnumMap<>(Reason.class);

  HttpRefusals() {
    for (Reason r : Reason.values()) {
      counts.put(r, new LongAdder());
    }
  }

  void count(Reason reason) {
    java.util.Objects.requireNonNull(counts.get(reason)).increment();
  }

  /** Each reason with its count, every reason included. */
  public void forEach(ObjLongConsumer<Reason> visitor) {
    counts.forEach((reason, n) -> visitor.accept(reason, n.sum()));
  }
}
