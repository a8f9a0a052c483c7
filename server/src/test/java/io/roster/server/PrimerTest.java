package io.roster.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.roster.server.testing.TestTime;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The start's priming drives every step a client would (each waits for the push it causes and
 * acks it), on scratch state of its own, xDS included, and says what it primed beside the sessions.
 */
class PrimerTest {

  @Test
  void everyStepOfThePrimingSeesWhatAClientWould() {
    assertThatCode(Primer::run).doesNotThrowAnyException();
  }

  @Test
  void itNamesWhatItPrimedANacosConnectionsFirstExchangesAndTheFirstHistogramObservation() throws Exception {
    assertThat(Primer.run()).contains("nacos: ServerCheckRequest", "nacos: ConnectionSetupRequest",
        "nacos: SetupAckRequest", "nacos: SubscribeServiceRequest", "nacos: InstanceRequest",
        "nacos: NotifySubscriberResponse", "metrics: histogram observation");
  }

  @Test
  void thePrimingRunsAnAdsExchangeThroughTheXdsService() throws Exception {
    assertThat(Primer.run()).contains("xds: LDS 1, CDS 1, EDS 1, pushed EDS 1");
  }

  @Test
  void thePrimingThreadAlwaysCompletes() throws Exception {
    Duration took = Primer.startPriming().get(TestTime.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
    assertThat(took).isPositive();
  }
}
