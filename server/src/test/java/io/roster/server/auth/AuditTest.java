package io.roster.server.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.RegistryException;
import io.roster.server.testing.AuditLines;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The audit trail's lines: who, from where, what and the result; refusals counted per identity and host. */
class AuditTest {

  private final AtomicLong nanos = new AtomicLong();
  private final AuditLines audit = new AuditLines();
  private final Principal tb = new Principal("tb", List.of(new Grant(Permission.WRITE, "public", Grant.ALL)),
      Long.MAX_VALUE, null, "10.0.0.7");
  private final Principal ops = new Principal("ops", List.of(new Grant(Permission.ADMIN, Grant.ALL, Grant.ALL)),
      Long.MAX_VALUE, null, "10.0.0.9");

  @BeforeEach
  void fakeTime() {
    Audit.ticker(nanos::get);
  }

  @AfterEach
  void close() {
    audit.close();
    Audit.ticker(io.roster.server.time.SystemScheduler::systemNanoTime);
  }

  private void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  @Test
  void anActionNamesWhoFromWhereWhatAndTheResult() {
    Audit.log(ops, "UpdateInstance", "public/DEFAULT_GROUP@@db 10.0.0.1:80/DEFAULT", "enabled=false", "ok");
    Audit.log(Principal.ANONYMOUS, "SetLogLevel", "io.roster", "level=DEBUG", "ok");

    assertThat(audit.lines()).containsExactly(
        "audit: who=ops from=10.0.0.9 action=UpdateInstance target=public/DEFAULT_GROUP@@db 10.0.0.1:80/DEFAULT "
            + "change=enabled=false result=ok",
        "audit: who=anonymous from=- action=SetLogLevel target=io.roster change=level=DEBUG result=ok");
  }

  /**
   * A flood of refusals costs a line at its start and one a minute per identity and host: the
   * first is written at once, the rest are counted into one line when the minute is over.
   */
  @Test
  void refusalsAreCountedPerIdentityAndHost() {
    for (int i = 0; i < 500; i++) {
      refuse(tb, "db-" + i);
    }
    refuse(tb.from("10.0.0.8"), "db");
    Audit.refused("", "10.0.0.66", "authorization", "authorization: refused: a token the auth file does not list");
    Audit.refused("bad\nname", "10.0.0.66", "password", "wrong password");
    assertThat(audit.lines()).hasSize(4);
    assertThat(audit.lines().get(0)).startsWith("audit: who=tb from=10.0.0.7 action=Refused what=admin on namespace "
        + "\"public\", service \"DEFAULT_GROUP@@db-0\" result=\"tb\" lacks permission admin on");
    assertThat(audit.lines().get(1)).startsWith("audit: who=tb from=10.0.0.8 action=Refused");
    assertThat(audit.lines().get(2)).startsWith("audit: who=(none) from=10.0.0.66 action=Refused what=authorization");
    assertThat(audit.lines().get(3)).startsWith("audit: who=(not a user name) from=10.0.0.66 action=Refused");

    advance(Audit.WINDOW.minusSeconds(1));
    Audit.flush();
    assertThat(audit.lines()).as("not before the minute is over").hasSize(4);

    advance(Duration.ofSeconds(2));
    Audit.flush();
    assertThat(audit.lines()).hasSize(5).last().asString().startsWith("audit: who=tb from=10.0.0.7 action=Refused "
        + "count=500 within=60s last=admin on namespace \"public\", service \"DEFAULT_GROUP@@db-499\" result=");

    refuse(tb, "again");
    assertThat(audit.lines()).as("a new minute, a new first line").hasSize(6);
  }

  @Test
  void anAdminsReplacementOfAnotherIdentitysRegistrationIsWrittenAndAnOwnersRefusalCounted() {
    Audit.track(ops, "ta", "RegisterInstance", "public/DEFAULT_GROUP@@db 127.0.0.8:21902/DEFAULT",
        CompletableFuture.completedFuture("stored"));
    Audit.track(ops, "ops", "RegisterInstance", "its own", CompletableFuture.completedFuture("stored"));
    Audit.track(ops, "", "RegisterInstance", "nobody's", CompletableFuture.completedFuture("stored"));
    Audit.track(tb, "ta", "DeregisterInstance", "public/DEFAULT_GROUP@@db 127.0.0.8:21902/DEFAULT",
        CompletableFuture.failedFuture(new RegistryException(RegistryException.Kind.PERMISSION_DENIED, "",
            "instance 127.0.0.8:21902/DEFAULT is registered by \"ta\"")));
    Audit.track(Principal.ANONYMOUS, "ta", "RegisterInstance", "auth off", CompletableFuture.completedFuture("x"));

    assertThat(audit.lines()).containsExactly(
        "audit: who=ops from=10.0.0.9 action=RegisterInstance(admin) target=public/DEFAULT_GROUP@@db "
            + "127.0.0.8:21902/DEFAULT change=of \"ta\" result=ok",
        "audit: who=tb from=10.0.0.7 action=Refused what=DeregisterInstance public/DEFAULT_GROUP@@db "
            + "127.0.0.8:21902/DEFAULT result=instance 127.0.0.8:21902/DEFAULT is registered by \"ta\" (more from "
            + "this identity and host in the next 60 s are counted into one line)");
  }

  @Test
  void aLoginNamesTheUserOnlyWhenItIsAUserName() {
    Audit.login("ops", "10.0.0.9", "ok");
    Audit.login("x\r\ny", "10.0.0.66", "refused: unknown user or wrong password");

    assertThat(audit.lines()).containsExactly("audit: who=ops from=10.0.0.9 action=Login result=ok",
        "audit: who=(not a user name) from=10.0.0.66 action=Login result=refused: unknown user or wrong password");
  }

  private static void refuse(Principal who, String service) {
    try {
      who.check(Permission.ADMIN, "public", "DEFAULT_GROUP", service);
    } catch (RegistryException expected) {
      return;
    }
    throw new AssertionError("not refused");
  }
}
