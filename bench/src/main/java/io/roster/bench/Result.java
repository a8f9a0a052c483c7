package io.roster.bench;

import java.util.ArrayList;
import java.util.List;

/** What one workload measured: rows of metric, value, target and verdict, plus notes. */
final class Result {

  /** One line of the report; {@code met} is null when the row has no target. */
  record Row(String metric, String value, String target, Boolean met) {}

  final String id;
  final String title;
  final List<Row> rows = new ArrayList<>();
  final List<String> notes = new ArrayList<>();

  Result(String id, String title) {
    this.id = id;
    this.title = title;
  }

  Result row(String metric, String value) {
    rows.add(new Row(metric, value, "", null));
    return this;
  }

  Result row(String metric, String value, String target, boolean met) {
    rows.add(new Row(metric, value, target, met));
    return this;
  }

  Result note(String text) {
    notes.add(text);
    return this;
  }
}
