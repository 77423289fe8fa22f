package dev.sluice.operators.internal;

import reactor.core.publisher.Flux;

/**
 * The output of the first stages of a pass when any of its positions can be produced without the
 * ones before it: the index path's elements (positions mapped to source indices), a split source's
 * rows with known counts, and one-to-one stages (an ordered map, a prefetch) over either. A resumed
 * buffer shuffle reads just the positions its buffer holds and the rest of the stream from here.
 */
interface Positional {
  /** The number of positions. */
  long length();

  /** The elements at positions {@code position ..}, in order. */
  Flux<?> from(long position);

  /** The elements at {@code positions} (ascending, each below {@link #length()}), in that order. */
  Flux<?> at(long[] positions);
}
