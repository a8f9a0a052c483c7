package io.roster.server;

import io.roster.server.config.SessionSettings;
import io.roster.server.registry.Registry;
import io.roster.server.registry.WarmUp;
import io.roster.server.session.SessionManager;
import io.roster.server.store.DurableWriter;
import io.roster.server.time.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * The warm-up of a fresh process, wired: the clients of the previous one are still coming back
 * (decision 20). Its window runs from the port's opening ({@link WarmUp#begin}), when the
 * clients come back, and ends early once they are back: no session opened and nothing
 * registered for a quiet period (decision 88). While it lasts, states list the departures this
 * process saw, so that clients hold only what it never had; once warm, states are whole, and a
 * standalone server's holds read back whose instances did not return end as if they had left.
 * Stateless; called once, while the server is built.
 */
final class StartWindow {

  private StartWindow() {}

  static WarmUp open(Scheduler scheduler, SessionSettings settings, Registry registry, SessionManager sessions,
      @Nullable DurableWriter durable) {
    WarmUp warmUp = WarmUp.pending(scheduler, settings.warmUp(), settings.warmUpQuiet());
    sessions.onOpen(warmUp::arrived);
    Registry.ChangeListener arrivals = change -> warmUp.arrived();
    registry.addListener(arrivals);
    warmUp.onWarm(() -> registry.removeListener(arrivals));
    registry.recordDepartures(true);
    warmUp.onWarm(() -> registry.recordDepartures(false));
    if (durable != null) {
      warmUp.onWarm(durable::endRestored);
      if (warmUp.isWarm()) {
        durable.endRestored(); // --warm-up 0s: no time to come back
      }
    }
    if (warmUp.isWarm()) {
      registry.recordDepartures(false);
    }
    return warmUp;
  }
}
