package dev.sluice.operators.internal;

/**
 * Take and skip stages applied to a range {@code [first, last)} of positions (rows or batch
 * numbers): {@code skip(n)} moves {@code first} up by {@code n}, {@code take(n)} keeps at most
 * {@code n} positions. Any other stage is not a cut.
 */
final class RangeCuts implements Stage.Visitor<Void> {
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
    stage.accept(this);
    return this;
  }

  @Override
  public Void take(TakeStage s) {
    last = Math.min(last, first + s.count());
    return null;
  }

  @Override
  public Void skip(SkipStage s) {
    first = Math.min(last, first + s.count());
    return null;
  }

  @Override
  public Void shuffle(ShuffleStage s) {
    throw notACut(s);
  }

  @Override
  public Void bufferShuffle(BufferShuffleStage s) {
    throw notACut(s);
  }

  @Override
  public Void shard(ShardStage s) {
    throw notACut(s);
  }

  @Override
  public Void batch(BatchStage s) {
    throw notACut(s);
  }

  @Override
  public Void repeat(RepeatStage s) {
    throw notACut(s);
  }

  @Override
  public Void element(FluxStage s) {
    throw notACut(s);
  }

  private static IllegalStateException notACut(Stage s) {
    return new IllegalStateException(s.describe() + " is not take or skip");
  }

  /** True for take and skip. */
  static boolean isCut(Stage s) {
    return switch (s.kind()) {
      case TAKE, SKIP -> true;
      case SHUFFLE, BUFFER_SHUFFLE, SHARD, BATCH, REPEAT, ELEMENT -> false;
    };
  }
}
