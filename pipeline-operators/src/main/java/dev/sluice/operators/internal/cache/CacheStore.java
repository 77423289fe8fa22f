package dev.sluice.operators.internal.cache;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.shardfile.FieldLayout;
import dev.sluice.core.internal.shardfile.ShardFile;
import dev.sluice.core.internal.shardfile.ShardFileReader;
import dev.sluice.core.internal.shardfile.ShardFileWriter;
import dev.sluice.core.internal.shardfile.ShardRows;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.operators.CacheSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One cache directory as this process uses it, opened once per process ({@link CacheRegistry}): it
 * ties together its index ({@link StoreIndex}), the segments this process has opened
 * ({@link OpenSegments}), who fills which block ({@link FillClaims}), the byte budget
 * ({@link CacheBudget}) and the sealed manifest, and writes and publishes the segments of the blocks
 * this process fills.
 *
 * <p>A block is filled by one process at a time: it claims the block in the index (its pid, start
 * time and a nonce), computes its rows, writes them to a private temporary file that it completes
 * (footer with length and checksums) and renames to the segment's name, and only then publishes the
 * block's entry (segment, length, checksum) in place of its claim. A process killed at any point
 * leaves at most a temporary file or an unpublished segment and a claim whose owner is dead, which
 * the next process takes over; a published entry always names a complete segment. Segments are
 * checked against their entry and their checksums when this process first opens them; a corrupt one
 * is removed and its block rebuilt from upstream.
 *
 * <p>Every wait is bounded by the pass's timeout; what cannot be served from the cache in time is
 * served from upstream for the rest of the pass (see {@link PassCounters}).
 */
final class CacheStore {
  /** The description of the cache, for people and {@code sluice cache}. */
  static final String META_FILE = "cache.json";
  /** The format name in {@link #META_FILE}. */
  static final String FORMAT = "sluice-cache";

  private final Path dir;
  private final Schema schema;
  private final List<FieldLayout> layouts;
  private final Geometry geometry;
  private final String key;
  /** The index, closed by {@link CacheRegistry#release}. */
  final StoreIndex index;
  private boolean sealed;
  private final BufferPool pool = MemoryManager.shared().pool("cache-write");
  private final OpenSegments segments;
  private final CacheBudget budget;
  private final FillClaims claims;

  /** A published block opened by this process: its rows, global indices from its first row's. */
  record Segment(long block, Path file, ShardFileReader reader, ShardRows rows) {}

  private CacheStore(Path dir, Schema schema, Geometry geometry, String key, String owner, long openWaitNanos) {
    this.dir = dir;
    this.schema = schema;
    this.layouts = FieldLayout.of(schema.fields());
    this.geometry = geometry;
    this.key = key;
    this.index = new StoreIndex(dir, geometry.blockCount() + 8, openWaitNanos);
    this.segments = new OpenSegments(dir, layouts, geometry, owner);
    this.budget = new CacheBudget(dir, this);
    this.claims = new FillClaims(this, segments, budget);
  }

  /**
   * Opens the cache in {@code dir} (an absolute, normalized path) for this process; called once per
   * process and directory by {@link CacheRegistry#open}. Creates the directory (mode 0700) and its
   * description, and opens or creates the index unless the cache is sealed: when
   * {@value SealedManifest#FILE} describes the cache of {@code key} and every segment it names passes
   * its checks, every block is served from those segments and the index is opened only if something
   * needs it later. A segment that is missing or fails its checks is left to the index (which
   * rebuilds it), which is then opened here.
   *
   * @param key the cache's key, which its sealed manifest names
   * @param description the cache's description for {@value #META_FILE}
   * @throws CacheIndex.Timeout when another process holds the index's creation lock too long
   */
  static CacheStore create(Path dir, Schema schema, Geometry geometry, String key, String description, String owner,
      long waitNanos) throws CacheIndex.Timeout {
    PrivateDirs.ensure(dir);
    CacheFiles.writeDescription(dir, description);
    long started = System.nanoTime();
    CacheStore s = new CacheStore(dir, schema, geometry, key, owner, waitNanos);
    IndexEntry[] sealed = SealedManifest.read(dir, key, geometry);
    if (sealed != null) {
      s.openSealed(sealed);
      if (s.segments.complete() != null) {
        PassCounters.LOG.debug("cache {} sealed: {} segments opened without the index in {} ms", dir, sealed.length,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
      }
    }
    if (s.segments.complete() == null) {
      s.index();
    }
    return s;
  }

  /** The store of {@code dir} this process has open, else null (see {@link CacheRegistry#opened}). */
  static CacheStore opened(Path dir) {
    return CacheRegistry.opened(dir);
  }

  /** Opens the segments a sealed manifest names; those that are missing or fail their checks are left to the index. */
  private void openSealed(IndexEntry[] manifest) {
    for (int b = 0; b < manifest.length; b++) {
      try {
        segments.open(b, manifest[b], true);
      } catch (DatasetException | UncheckedIOException bad) {
        // read through the index, which rebuilds it when its entry names the same segment
      }
    }
    this.sealed = segments.complete() != null;
    if (sealed) { // the index is not opened, which would check its files: check them here
      for (String f : new String[] {CacheIndex.MAP_FILE, CacheIndex.LOCK_FILE, CacheIndex.USERS_FILE}) {
        PrivateDirs.tighten(dir.resolve(f));
      }
      java.util.Set<String> named = new java.util.HashSet<>();
      for (int b = 0; b < manifest.length; b++) {
        named.add(segmentName(b, manifest[b].nonce()));
      }
      CacheFiles.removeOrphansUnlessUsed(dir, named); // what a killed process left, which opening the index would remove
    }
  }

  /**
   * The index, opened (or created, or recovered) on first use.
   *
   * @throws CacheIndex.Timeout when another process holds its creation lock too long, or this store was released
   */
  CacheIndex index() throws CacheIndex.Timeout {
    return index.get();
  }

  /** Whether this process has opened the cache's index (a sealed cache whose segments all pass is read without). */
  boolean indexOpened() {
    return index.opened();
  }

  /**
   * Writes the sealed manifest once this process has every block open, unless it read them from
   * one: the entries the index publishes, checked again after the write (a manifest whose entries
   * changed meanwhile is deleted). Best effort: a cache without a manifest is read through the index.
   */
  private void sealIfComplete() {
    if (segments.complete() == null) {
      return;
    }
    synchronized (this) {
      if (sealed || index.closed()) {
        return;
      }
      sealed = true;
    }
    try {
      IndexEntry[] published = publishedEntries();
      if (published == null) {
        return;
      }
      SealedManifest.write(dir, key, geometry, published);
      IndexEntry[] again = publishedEntries();
      if (again == null || !java.util.Arrays.equals(published, again)) {
        SealedManifest.delete(dir);
      }
    } catch (IOException | CacheIndex.Timeout | RuntimeException e) {
      // best effort: the cache stays readable through the index
    }
  }

  /**
   * Deletes the sealed manifest before a segment is deleted or replaced, so that no new reader is
   * sent to it; the manifest is written again once this process has every block open.
   */
  private void unseal() {
    synchronized (this) {
      sealed = false;
    }
    try {
      SealedManifest.delete(dir);
    } catch (IOException e) {
      // the manifest's readers check every segment it names and fall back to the index
    }
  }

  /** The published entry of every block, or null when one is not published. */
  private IndexEntry[] publishedEntries() throws CacheIndex.Timeout {
    IndexEntry[] out = new IndexEntry[(int) geometry.blockCount()];
    for (int b = 0; b < out.length; b++) {
      IndexEntry e = index().get(b, 100_000_000L);
      if (e == null || !e.published()) {
        return null;
      }
      out[b] = e;
    }
    return out;
  }

  /** False once {@link CacheRegistry#release} closed this store: a pass then opens the directory afresh. */
  boolean isOpen() {
    return !index.closed();
  }

  /** Checks that a later user of this store gives the same schema and block geometry. */
  void checkSame(Schema s, Geometry g) {
    if (!schema.equals(s) || geometry.blockRows() != g.blockRows() || geometry.blockCount() != g.blockCount()) {
      throw new IllegalStateException(dir + " is open in this process with the schema " + schema + " and "
          + geometry.blockRows() + "-row blocks, not " + s + " and " + g.blockRows() + "-row blocks");
    }
  }

  Path dir() {
    return dir;
  }

  Schema schema() {
    return schema;
  }

  Geometry geometry() {
    return geometry;
  }

  /** The rows of every block, once this process has opened every segment; else null. */
  ShardRows complete() {
    return segments.complete();
  }

  /** The segment of {@code block} when this process has it open, else null. */
  Segment opened(long block) {
    return segments.get(block);
  }

  /** The file name of the segment of {@code block} published under {@code nonce}. */
  static String segmentName(long block, long nonce) {
    return CacheFiles.segmentName(block, nonce);
  }

  // ---------------------------------------------------------------- deciding

  /** What to do with {@code block} (see {@link FillClaims#decide}). */
  Decision decide(long block, PassCounters pass, long timeoutNanos) {
    return claims.decide(block, pass, timeoutNanos);
  }

  /** {@link #decide} when it needs no wait (see {@link FillClaims#tryDecide}); else null. */
  Decision tryDecide(long block, PassCounters pass) {
    return claims.tryDecide(block, pass);
  }

  /** Ends a claim this thread holds without publishing (see {@link FillClaims#release}). */
  void release(long block, Decision d, PassCounters pass) {
    claims.release(block, d, pass);
  }

  /** A hit on a segment just opened, after sealing the cache if that segment completed it. */
  Decision hit(Segment s) {
    sealIfComplete();
    return Decision.hit(s);
  }

  // ---------------------------------------------------------------- segments

  /** A published segment that is unreadable: removed from the index and deleted, so the block is rebuilt. */
  void discard(long block, IndexEntry e, DatasetException bad, PassCounters pass, long deadline)
      throws CacheIndex.Timeout {
    pass.warnOnce("corrupt " + block, "cache segment " + bad.getMessage() + "; the block is rebuilt from upstream");
    pass.fallback();
    unseal();
    if (index().remove(block, e, pass.indexWait(deadline))) {
      index().add(CacheIndex.BYTES_KEY, -e.bytes(), Long.MAX_VALUE, pass.indexWait(deadline));
      try {
        Files.deleteIfExists(dir.resolve(CacheFiles.segmentName(block, e.nonce())));
      } catch (IOException ignored) {
        // an unreferenced segment is removed with orphans once no process uses the cache
      }
    }
  }

  // ---------------------------------------------------------------- filling

  /**
   * Writes the rows of a block this thread claimed to its segment and publishes it; the segment, or
   * null when the block is served from upstream (the budget is reached, the write failed, the index
   * did not answer in time). Ends the claim either way; the caller still owns {@code batch}.
   */
  Segment publish(long block, Decision d, Batch batch, PassCounters pass, long timeoutNanos) {
    long deadline = System.nanoTime() + timeoutNanos;
    Path file = dir.resolve(segmentName(block, d.claim.nonce()));
    long reserved = 0;
    boolean published = false;
    try {
      if (batch.size() != geometry.blockSize(block)) {
        throw new IllegalStateException("block " + block + " of " + dir + " has " + geometry.blockSize(block)
            + " rows but the upstream gave " + batch.size());
      }
      long max = pass.maxBytes();
      if (max != CacheSpec.UNLIMITED && (pass.isBudgetReached()
          || index().counter(CacheIndex.BYTES_KEY, pass.indexWait(deadline)) + batch.byteSize() > max)) {
        budget.markReached(pass);
        pass.bypass(block, PassCounters.Bypass.BUDGET);
        return null;
      }
      ShardFile.Summary written;
      try (ShardFileWriter w = ShardFileWriter.create(file, layouts, batch.size(), pool,
          PrivateDirs.fileAttributes(dir))) {
        w.write(batch);
        written = w.finish();
      } catch (DatasetIOException | UncheckedIOException x) {
        pass.warnOnce("write", dir + ": cannot write a segment (" + x.getMessage() + "); blocks that cannot be"
            + " written are served from upstream (counted as fallbacks)");
        pass.bypass(block, PassCounters.Bypass.FALLBACK);
        return null;
      }
      reserved = index().add(CacheIndex.BYTES_KEY, written.bytes(), max, pass.indexWait(deadline)) < 0 ? 0 : written.bytes();
      if (reserved == 0) {
        budget.markReached(pass);
        pass.bypass(block, PassCounters.Bypass.BUDGET);
        return null;
      }
      IndexEntry mine = Claims.publication(batch.size(), written.bytes(), written.checksum(), d.claim.nonce());
      IndexEntry winner = mine;
      if (!index().replace(block, d.claim, mine, pass.indexWait(deadline))) {
        // the claim was taken over (this process looked dead or slow): publish unless someone already did
        IndexEntry now = index().get(block, pass.indexWait(deadline));
        if (now != null && now.published()) {
          winner = now;
        } else if (now == null ? !index().putIfAbsent(block, mine, pass.indexWait(deadline))
            : !index().replace(block, now, mine, pass.indexWait(deadline))) {
          pass.bypass(block, PassCounters.Bypass.FALLBACK);
          return null;
        }
      }
      published = winner == mine;
      Segment s = segments.open(block, winner, winner != mine);
      sealIfComplete();
      pass.computed(block);
      if (published) {
        pass.filled(block, written.bytes());
      }
      return s;
    } catch (CacheIndex.Timeout t) {
      claims.indexTimedOut(block, pass, t);
      return null;
    } catch (DatasetException bad) {
      pass.warnOnce("corrupt " + block, "cache segment " + bad.getMessage() + "; the block is served from upstream");
      pass.bypass(block, PassCounters.Bypass.FALLBACK);
      return null;
    } finally {
      if (!published) {
        CacheFiles.deleteQuietly(file);
        if (reserved > 0) {
          budget.unreserve(reserved, pass);
        }
        claims.release(block, d, pass);
      } else {
        claims.finish(block, d);
      }
    }
  }

  /**
   * Opens every published block this process has not opened yet, so that a cache filled by other
   * processes becomes {@link #complete()}; stops at the first block that is not published or when
   * the index does not answer.
   */
  void openPublished(PassCounters pass, long timeoutNanos) {
    long deadline = System.nanoTime() + timeoutNanos;
    for (long b = 0; b < geometry.blockCount() && segments.complete() == null; b++) {
      if (segments.get(b) != null) {
        continue;
      }
      try {
        IndexEntry e = index().get(b, pass.indexWait(deadline));
        if (e == null || !e.published()) {
          return;
        }
        segments.open(b, e, true);
        sealIfComplete();
      } catch (CacheIndex.Timeout t) {
        pass.indexWasSlow();
        return;
      } catch (DatasetException bad) {
        return; // decide() rebuilds it when a pass needs it
      }
    }
  }

  @Override
  public String toString() {
    return "cache(" + dir + ")";
  }
}
