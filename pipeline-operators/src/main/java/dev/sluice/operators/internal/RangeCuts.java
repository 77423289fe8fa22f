package dev.sluice.operators.internal;

/**
 * Take and skip stages applied to a range {@code [first, last)} of positions (rows or batch
 * numbers): {@code skip(n)} moves {@code first} up by {@code n}, {@code take(n)} keeps at most
 * {@code n} positions.
 */
final class RangeCuts {
  private long first;
  private long last;

  RangeCuts(long first, long last) {
    this.first = first;
    this.last = last;
  }

  long first() {
    return first;
  }

  long last() {
    return last;
  }

  /** Applies {@code stage}, a take or a skip. */
  RangeCuts apply(Stage stage) {
    switch (stage.kind()) {
      // last - first >= 0, so neither sum can overflow (take(Long.MAX_VALUE) after a skip)
      case TAKE -> last = first + Math.min(last - first, ((TakeStage) stage).count());
      case SKIP -> first = first + Math.min(last - first, ((SkipStage) stage).count());
      case SHUFFLE, BUFFER_SHUFFLE, SHARD, BATCH, REPEAT, ELEMENT ->
          throw new IllegalStateException(stage.describe() + " is not take or skip");
    }
    return this;
  }

  /** True for take and skip. */
  static boolean isCut(Stage s) {
    return switch (s.kind()) {
      case TAKE, SKIP -> true;
      case SHUFFLE, BUFFER_SHUFFLE, SHARD, BATCH, REPEAT, ELEMENT -> false;
    };
  }
}
