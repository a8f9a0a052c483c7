package io.roster.server.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The counting rules of logins and bad tokens on the fake clock (decision 79): per (host,
 * username), per host with the usernames proven there excepted, windows of a minute, checks under
 * way counted, and bad tokens that never refuse anything.
 */
class GuessesTest {

  private static final String HOST = "10.0.0.9";

  private final FakeScheduler clock = new FakeScheduler();
  private final Guesses guesses = new Guesses(clock::nanoTime, Duration.ofHours(5));

  @Test
  void fiveFailuresOfOnePairRefuseItUncheckedUntilItsWindowEndsButNotOtherUsersOfTheHost() {
    for (int i = 0; i < Guesses.PAIR_LIMIT; i++) {
      fail(HOST, "ops");
    }

    clock.advance(Duration.ofSeconds(20));
    Guesses.Refusal r = refused(guesses.admit(HOST, "ops"));
    assertThat(r.message()).isEqualTo("password: 5 failed logins of \"ops\" from 10.0.0.9 within 60 s; its logins "
        + "are not checked until the window ends (retry in 40 s)");
    assertThat(r.retryAfter()).isEqualTo(Duration.ofSeconds(40));
    assertThat(guesses.admit(HOST, "dev")).isInstanceOf(Guesses.Ticket.class);
    assertThat(guesses.admit("10.0.0.8", "ops")).isInstanceOf(Guesses.Ticket.class);
    assertThat(guesses.throttled()).isEqualTo(1);

    clock.advance(Duration.ofSeconds(40));
    assertThat(guesses.admit(HOST, "ops")).isInstanceOf(Guesses.Ticket.class);
  }

  @Test
  void aHostOverItsLimitIsRefusedUncheckedExceptForUsersWhoLoggedInFromItBefore() {
    guesses.ended(ticket(HOST, "alice"), true, "");
    for (int i = 0; i < Guesses.HOST_LIMIT; i++) {
      fail(HOST, "sprayed-" + i); // one guess per username: no pair reaches its limit
    }

    assertThat(refused(guesses.admit(HOST, "bob")).message())
        .isEqualTo("password: 30 failed logins from 10.0.0.9 within 60 s; logins of users who have not logged in "
            + "from this address lately are not checked until the window ends (retry in 60 s)");
    assertThat(guesses.admit(HOST, "alice")).as("proven on this host").isInstanceOf(Guesses.Ticket.class);
    assertThat(guesses.admit("10.0.0.8", "bob")).as("another host").isInstanceOf(Guesses.Ticket.class);
    assertThat(guesses.proven(HOST, "alice")).isTrue();
    assertThat(guesses.proven("10.0.0.8", "alice")).as("proven per host").isFalse();

    clock.advance(Guesses.WINDOW);
    assertThat(guesses.admit(HOST, "bob")).isInstanceOf(Guesses.Ticket.class);
  }

  @Test
  void aProvenUserIsStillHeldToThePairLimit() {
    guesses.ended(ticket(HOST, "alice"), true, "");
    for (int i = 0; i < Guesses.PAIR_LIMIT; i++) {
      fail(HOST, "alice");
    }

    assertThat(guesses.admit(HOST, "alice")).isInstanceOf(Guesses.Refusal.class);
  }

  @Test
  void aUserIsProvenForTheTokenLifetime() {
    guesses.ended(ticket(HOST, "alice"), true, "");

    clock.advance(Duration.ofHours(5).minusSeconds(1));
    assertThat(guesses.proven(HOST, "alice")).isTrue();
    clock.advance(Duration.ofSeconds(1));
    assertThat(guesses.proven(HOST, "alice")).isFalse();
  }

  @Test
  void checksUnderWayCountAsFailuresUntilTheyEnd() {
    Guesses.Ticket[] pending = new Guesses.Ticket[Guesses.PAIR_LIMIT];
    for (int i = 0; i < pending.length; i++) {
      pending[i] = ticket(HOST, "ops");
    }
    assertThat(guesses.admit(HOST, "ops")).as("a burst gets no more checks than a sequence")
        .isInstanceOf(Guesses.Refusal.class);

    guesses.abandoned(pending[0]);
    guesses.ended(pending[1], true, "");
    assertThat(guesses.admit(HOST, "ops")).as("a success clears the pair's failures").isInstanceOf(Guesses.Ticket.class);
  }

  @Test
  void aSuccessClearsThePairsFailures() {
    for (int i = 0; i < Guesses.PAIR_LIMIT - 1; i++) {
      fail(HOST, "ops");
    }
    guesses.ended(ticket(HOST, "ops"), true, "");
    for (int i = 0; i < Guesses.PAIR_LIMIT - 1; i++) {
      fail(HOST, "ops");
    }

    assertThat(guesses.admit(HOST, "ops")).isInstanceOf(Guesses.Ticket.class);
  }

  @Test
  void badTokensAreCountedButNeverRefuseALogin() {
    for (int i = 0; i < 1000; i++) {
      guesses.badToken(HOST, "hello.token: a token the auth file does not list");
    }

    assertThat(guesses.failures()).isEqualTo(1000);
    assertThat(guesses.admit(HOST, "ops")).isInstanceOf(Guesses.Ticket.class);
    assertThat(guesses.throttled()).isZero();
  }

  @Test
  void revokedCredentialsAreNeitherGuessesNorRefusals() {
    for (int i = 0; i < 100; i++) {
      guesses.revoked(HOST, "hello.token: token \"ci\" was removed from the auth file");
    }

    assertThat(guesses.failures()).isZero();
    assertThat(guesses.admit(HOST, "ops")).isInstanceOf(Guesses.Ticket.class);
  }

  @Test
  void hostsAreReadFromEveryTransportsAddressForm() {
    assertThat(Guesses.host("/10.1.2.3:5678")).isEqualTo("10.1.2.3");
    assertThat(Guesses.host("[::1]:5678")).isEqualTo("::1");
    assertThat(Guesses.host("/[fe80::1]:80")).isEqualTo("fe80::1");
    assertThat(Guesses.host("10.1.2.3")).isEqualTo("10.1.2.3");
    assertThat(Guesses.host("::1")).isEqualTo("::1");
  }

  /**
   * The hint a token-less request gets about its host's last failed login stays until that user
   * logs in: another user of the host logging in meanwhile (an application with the right password
   * beside one with a wrong one) does not take it away.
   */
  @Test
  void theLastFailedLoginOfAHostIsForgottenOnlyWhenThatUserLogsIn() {
    fail(HOST, "app");
    guesses.ended(ticket(HOST, "ops"), true, "");
    assertThat(guesses.lastFailedLogin(HOST)).isEqualTo("the last login from 10.0.0.9, 0 s ago, failed (password: wrong)");

    guesses.ended(ticket(HOST, "app"), true, "");
    assertThat(guesses.lastFailedLogin(HOST)).isNull();
  }

  private void fail(String host, String user) {
    guesses.ended(ticket(host, user), false, "password: wrong");
  }

  private Guesses.Ticket ticket(String host, String user) {
    Guesses.Admission a = guesses.admit(host, user);
    assertThat(a).isInstanceOf(Guesses.Ticket.class);
    return (Guesses.Ticket) a;
  }

  private static Guesses.Refusal refused(Guesses.Admission a) {
    assertThat(a).isInstanceOf(Guesses.Refusal.class);
    return (Guesses.Refusal) a;
  }
}
