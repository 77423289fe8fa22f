package dev.sluice.operators.internal.cache;

import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.Options;
import dev.sluice.core.internal.OptionalLibrary;
import dev.sluice.core.spi.StageCounters;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.internal.Stage;
import java.nio.file.Path;
import java.util.List;

/**
 * A cache as the source of the operators after it. Its passes count separately: a pipeline asks
 * for a view per pass ({@link #openPass()}) and closes it when the pass ends, which reports the
 * pass's counts. A measured pass's view also reports them to the stage that reads it
 * ({@code sluice.stage.cache.*}: {@code hits}, {@code misses}, {@code uncached}, {@code fallbacks},
 * {@code blocks.written}, {@code bytes.written}).
 */
public interface CachedDataset extends Dataset<Example>, StageCounters.Source {

  /** A view of this cache bound to the counts of one pass; the view's {@code close} ends the pass. */
  Pass openPass();

  /** The cache's directory (it exists once a pass has used it). */
  Path directory();

  /** One pass's view: the dataset the planner reads (random access or split, as the cache) and its end. */
  interface Pass extends AutoCloseable {
    /** The dataset of this pass. */
    Dataset<Example> dataset();

    /** Ends the pass and reports its counts. */
    @Override
    void close();
  }

  /**
   * The cache of {@code source} after {@code stages} (the pipeline before {@code cache}): random
   * access when the upstream is, a split source with the same splits when the upstream is one.
   * Checks what can be checked without reading: the operators, the name, the directories, the JVM
   * flags, the free space. First of all, that Chronicle Map (the index) is on the class path:
   * no class that names its types is loaded before.
   *
   * @throws dev.sluice.core.MissingDependencyException naming {@code net.openhft:chronicle-map}
   *     when it is not on the class path
   */
  static CachedDataset of(Dataset<?> source, List<Stage> stages, Options options, CacheSpec spec,
      CacheListener listener) {
    OptionalLibrary.CHRONICLE_MAP.require();
    Upstream upstream = Upstream.of(source, stages, options, spec);
    CacheState state = new CacheState(upstream, spec, listener);
    state.checkAtAssembly();
    if (upstream.mode() == Upstream.Mode.RANDOM_ACCESS) {
      return new CachedRandomAccess(state, null);
    }
    return source instanceof BatchSplitDataset<?> ? new CachedSplits.Batches(state, null) : new CachedSplits(state, null);
  }
}
