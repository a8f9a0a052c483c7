package io.roster.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Parameters from a query string and a form body, and the typed accessors' refusals. */
class HttpRequestTest {

  @Test
  void queryThenFormTheFirstValueOfANameWinsAndEscapesAreDecoded() {
    Map<String, String> p = new LinkedHashMap<>();
    HttpRequest.parseForm("serviceName=shop%40%40orders&ip=10.0.0.1", p);
    HttpRequest.parseForm("ip=10.9.9.9&port=80&metadata=a%3D1%2Cb%3D2&flag&&x=", p);
    assertThat(p).containsExactly(Map.entry("serviceName", "shop@@orders"), Map.entry("ip", "10.0.0.1"),
        Map.entry("port", "80"), Map.entry("metadata", "a=1,b=2"), Map.entry("flag", ""), Map.entry("x", ""));
  }

  @Test
  void badEscapesAndTooManyParametersAreRefused() {
    assertThatThrownBy(() -> HttpRequest.parseForm("a=%zz", new LinkedHashMap<>()))
        .isInstanceOf(HttpException.class).hasMessageStartingWith("not URL-encoded: \"a=%zz\"");
    StringBuilder many = new StringBuilder();
    for (int i = 0; i <= HttpRequest.MAX_PARAMETERS; i++) {
      many.append("p").append(i).append("=1&");
    }
    assertThatThrownBy(() -> HttpRequest.parseForm(many.toString(), new LinkedHashMap<>()))
        .isInstanceOf(HttpException.class).hasMessage("too many parameters (limit: 64)")
        .satisfies(e -> assertThat(((HttpException) e).status()).isEqualTo(400));
  }

  @Test
  void typedAccessorsNameTheParameterTheValueAndWhatWasExpected() {
    HttpRequest r = HttpRequest.of("GET", "/x", Map.of("n", "12", "b", "yes", "d", "x", "empty", ""), "127.0.0.1");
    assertThat(r.intParam("n", 1, 1, 100)).isEqualTo(12);
    assertThat(r.intParam("missing", 7, 1, 100)).isEqualTo(7);
    assertThat(r.param("empty", "fallback")).isEqualTo("fallback");
    assertThatThrownBy(() -> r.intParam("n", 1, 1, 10)).hasMessage("n: \"12\" (expected: an integer 1..10)");
    assertThatThrownBy(() -> r.boolParam("b")).hasMessage("b: \"yes\" (expected: true or false)");
    assertThatThrownBy(() -> r.doubleParam("d")).hasMessage("d: \"x\" (expected: a number)");
    assertThatThrownBy(() -> r.required("empty")).hasMessage("empty: missing (expected: a value)");
  }
}
