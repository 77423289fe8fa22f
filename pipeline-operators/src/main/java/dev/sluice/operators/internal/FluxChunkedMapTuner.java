package dev.sluice.operators.internal;

import dev.sluice.core.Options.ChunkPlacement;

/**
 * Chunk size and inline decisions of one subscription (adaptive mode): chunks double (up to
 * {@value #MAX_ADAPTIVE_CHUNK} when mapped on workers, to {@code MAX_INLINE_CHUNK} when mapped
 * inline) while one maps in under {@value #GROW_BELOW_MAP_NANOS} ns and its
 * inputs arrived faster than one per {@value #GROW_BELOW_FILL_NANOS_PER_ELEMENT} ns, and halve
 * (not below the initial size) when inputs arrive slower than one per
 * {@value #SHRINK_ABOVE_FILL_NANOS_PER_ELEMENT} ns. Chunk boundaries never change the output.
 */
final class FluxChunkedMapTuner {
  static final long GROW_BELOW_MAP_NANOS = 100_000;
  static final long GROW_BELOW_FILL_NANOS_PER_ELEMENT = 2_000;
  static final long SHRINK_ABOVE_FILL_NANOS_PER_ELEMENT = 20_000;
  /** A chunk maps on the calling thread when its expected cost is below this (the order of a hop to a worker and back) ... */
  static final long INLINE_BELOW_NANOS = 20_000;
  /**
   * ... or below this multiple of what its inputs took to arrive: a function up to twice as dear as
   * producing its input gains at most 3× from running beside the producer on idle cores, and pays
   * hops and a thread migration for it; the margin also keeps a chunk that met a compilation or a
   * GC pause, or the interpreter on a cold JVM (both sides slow and alike), from sending a cheap
   * function, and with it the rest of the pass, to the workers.
   */
  static final int INLINE_BELOW_FILL_MULTIPLE = 2;
  /**
   * The first chunks of a pass map inline, to measure the function: the first measurement of a
   * cold JVM includes one-time costs (linkage, the interpreter) that would send a cheap function
   * to the workers, and with it the rest of the pass; the estimate is the lowest of them.
   */
  static final int INLINE_FIRST_CHUNKS = 3;
  static final int MAX_ADAPTIVE_CHUNK = 4096;
  /**
   * The largest adaptive chunk that is mapped inline: inline chunks save no hop by being large,
   * and large ones cost locality (the elements in flight no longer fit the cache; the element-path
   * figures in docs/benchmarks.md show the difference).
   */
  static final int MAX_INLINE_CHUNK = 256;

  final boolean adaptive;
  /** False when every chunk goes to the workers ({@link ChunkPlacement#WORKERS}). */
  final boolean mayInline;
  final int initialChunkSize;
  volatile int chunkSize;
  /**
   * The function's time per element: the lowest recent measurement, allowed to rise by at most an
   * eighth per chunk, so that one slow chunk (a GC pause, a chunk whose inputs were cold in another
   * core's cache) does not move the next chunks to the workers; -1 until measured.
   */
  volatile long mapNanosPerElement = -1;
  /** Moving average of the time between inputs; -1 until measured. */
  volatile long fillNanosPerElement = -1;
  /** Chunks measured so far. */
  volatile int observed;

  FluxChunkedMapTuner(int chunkSize, boolean adaptive, boolean mayInline) {
    this.initialChunkSize = chunkSize;
    this.chunkSize = chunkSize;
    this.adaptive = adaptive;
    this.mayInline = mayInline;
  }

  int chunkSize() {
    return chunkSize;
  }

  /** A chunk of {@code size} inputs filled in {@code fillNanos} and mapped in {@code mapNanos}. */
  synchronized void observe(int size, long fillNanos, long mapNanos, boolean inline) {
    observed++;
    long perElement = mapNanos / Math.max(1, size);
    long estimate = mapNanosPerElement;
    mapNanosPerElement = estimate < 0 || perElement <= estimate ? perElement
        : Math.min(perElement, estimate + estimate / 8 + 1);
    long fillPerElement = fillNanos / Math.max(1, size);
    fillNanosPerElement = fillNanosPerElement < 0 ? fillPerElement : (3 * fillNanosPerElement + fillPerElement) / 4;
    if (size != chunkSize) {
      return; // a last partial chunk, or one from before the previous change
    }
    int limit = inline ? Math.max(initialChunkSize, MAX_INLINE_CHUNK) : MAX_ADAPTIVE_CHUNK;
    if (mapNanos < GROW_BELOW_MAP_NANOS && fillPerElement < GROW_BELOW_FILL_NANOS_PER_ELEMENT
        && chunkSize < limit) {
      chunkSize = Math.min(limit, chunkSize * 2);
    } else if ((fillPerElement > SHRINK_ABOVE_FILL_NANOS_PER_ELEMENT || chunkSize > limit)
        && chunkSize > initialChunkSize) {
      chunkSize = Math.max(initialChunkSize, chunkSize / 2);
    }
  }

  /**
   * True when a chunk of {@code size} elements is expected to map in less than
   * {@value #INLINE_BELOW_NANOS} ns or in less than {@value #INLINE_BELOW_FILL_MULTIPLE}× the
   * time its inputs took to arrive: then it maps on the thread that completed it (adaptive mode
   * only, and only when chunks may map inline at all). The first {@value #INLINE_FIRST_CHUNKS} chunks of a subscription map inline too, to
   * measure the function; every chunk measures it and the upstream again.
   *
   * <p>Why the comparison with the inputs' arrival: with the fixed budget alone, a cheap function
   * in large chunks sits on the budget's edge and some of its chunks go to the workers. That costs
   * more than the hop: a chunk mapped on a worker
   * moves the rest of the pipeline to that worker (results are emitted, and the upstream asked
   * for more, on the thread that finished the chunk), so a {@code prefetch} producer downstream
   * has to be woken for every replenishment, and a chunk measured on a worker looks slower (its
   * inputs are in the other core's cache), which would send the next ones there too.
   */
  boolean mapsInline(int size) {
    if (!adaptive || !mayInline) {
      return false;
    }
    long perElement = mapNanosPerElement;
    if (observed < INLINE_FIRST_CHUNKS) {
      return true;
    }
    long budget = Math.max(INLINE_BELOW_NANOS, fillNanosPerElement * size * INLINE_BELOW_FILL_MULTIPLE);
    return perElement * size < budget;
  }
}
