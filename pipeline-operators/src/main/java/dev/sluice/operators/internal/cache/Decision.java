package dev.sluice.operators.internal.cache;

import java.util.concurrent.CompletableFuture;

/**
 * What a pass does with a block ({@link CacheStore#decide}): read its open segment ({@code HIT}),
 * fill it under the claim this thread holds ({@code FILL}, ended by {@link CacheStore#publish} or
 * {@link CacheStore#release}), or serve it from upstream for the reason given ({@code UPSTREAM}).
 */
final class Decision {
  enum Kind { HIT, FILL, UPSTREAM }

  final Kind kind;
  final CacheStore.Segment segment;
  final IndexEntry claim;
  final PassCounters.Bypass why;
  final CompletableFuture<Void> token;

  Decision(Kind kind, CacheStore.Segment segment, IndexEntry claim, PassCounters.Bypass why,
      CompletableFuture<Void> token) {
    this.kind = kind;
    this.segment = segment;
    this.claim = claim;
    this.why = why;
    this.token = token;
  }

  static Decision hit(CacheStore.Segment s) {
    return new Decision(Kind.HIT, s, null, null, null);
  }

  static Decision upstream(PassCounters.Bypass why) {
    return new Decision(Kind.UPSTREAM, null, null, why, null);
  }
}
