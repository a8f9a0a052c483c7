package io.roster.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StatsTest {

  @Test
  void nearestRankOnOneToHundred() {
    double[] s = new double[100];
    for (int i = 0; i < 100; i++) {
      s[99 - i] = i + 1; // unsorted on purpose
    }
    Stats st = Stats.of(s);
    assertThat(st.n()).isEqualTo(100);
    assertThat(st.p50()).isEqualTo(50);
    assertThat(st.p90()).isEqualTo(90);
    assertThat(st.p99()).isEqualTo(99);
    assertThat(st.max()).isEqualTo(100);
  }

  @Test
  void twentySamplesMakeP99TheMaximum() {
    double[] s = new double[20];
    for (int i = 0; i < 20; i++) {
      s[i] = i + 1;
    }
    Stats st = Stats.of(s);
    assertThat(st.p50()).isEqualTo(10);
    assertThat(st.p90()).isEqualTo(18);
    assertThat(st.p99()).isEqualTo(20);
    assertThat(st.max()).isEqualTo(20);
  }

  @Test
  void oneSampleIsEveryPercentile() {
    Stats st = Stats.of(new double[] {7});
    assertThat(List.of(st.p50(), st.p90(), st.p99(), st.max())).containsOnly(7.0);
  }

  @Test
  void noSamplesGiveNaNAndFormatAsDashes() {
    Stats st = Stats.of(new double[0]);
    assertThat(st.n()).isZero();
    assertThat(st.p50()).isNaN();
    assertThat(st.format("ms")).isEqualTo("p50 - / p90 - / p99 - / max - ms (n=0)");
  }

  @Test
  void nanosAreReportedAsMillis() {
    List<Long> nanos = new ArrayList<>();
    nanos.add(1_500_000L);
    nanos.add(2_500_000L);
    Stats st = Stats.ofNanosAsMillis(nanos);
    assertThat(st.p50()).isEqualTo(1.5);
    assertThat(st.max()).isEqualTo(2.5);
    assertThat(st.format("ms")).isEqualTo("p50 1.50 / p90 2.50 / p99 2.50 / max 2.50 ms (n=2)");
  }
}
