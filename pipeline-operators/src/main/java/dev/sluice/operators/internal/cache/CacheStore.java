package dev.sluice.operators.internal.cache;

import dev.sluice.core.Batch;
import dev.sluice.core.BufferPool;
import dev.sluice.core.DatasetException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.shardfile.FieldLayout;
import dev.sluice.core.internal.shardfile.ShardFile;
import dev.sluice.core.internal.shardfile.ShardFileReader;
import dev.sluice.core.internal.shardfile.ShardFileWriter;
import dev.sluice.core.internal.shardfile.ShardRows;
import dev.sluice.operators.CacheSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * One cache directory as this process uses it, opened once per process: the index (Chronicle Map),
 * the segments this process has opened, and the claim protocol.
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
  private static final Map<Path, CacheStore> OPEN = new ConcurrentHashMap<>();

  /** The description of the cache, for people and {@code sluice cache}. */
  static final String META_FILE = "cache.json";
  /** The format name in {@link #META_FILE}. */
  static final String FORMAT = "sluice-cache";

  private final Path dir;
  private final Schema schema;
  private final List<FieldLayout> layouts;
  private final Geometry geometry;
  private final String key;
  private final long entries;
  private final long openWaitNanos;
  private CacheIndex index;
  private boolean sealed;
  private final BufferPool pool = MemoryManager.shared().pool("cache-write");
  private final OpenSegments segments;
  private final CacheBudget budget;
  private final Map<Long, CompletableFuture<Void>> inProcess = new ConcurrentHashMap<>();
  private boolean released;

  /** A published block opened by this process: its rows, global indices from its first row's. */
  record Segment(long block, Path file, ShardFileReader reader, ShardRows rows) {}

  private CacheStore(Path dir, Schema schema, Geometry geometry, String key, String owner, long openWaitNanos) {
    this.dir = dir;
    this.schema = schema;
    this.layouts = FieldLayout.of(schema.fields());
    this.geometry = geometry;
    this.key = key;
    this.entries = geometry.blockCount() + 8;
    this.openWaitNanos = openWaitNanos;
    this.segments = new OpenSegments(dir, layouts, geometry, owner);
    this.budget = new CacheBudget(dir, this);
  }

  /**
   * The store of the cache in {@code dir}, opened once per process (later calls return it):
   * creates the directory (mode 0700) and its description, and opens or creates the index unless
   * the cache is sealed: when {@value SealedManifest#FILE} describes the cache of {@code key} and
   * every segment it names passes its checks, every block is served from those segments and the
   * index is opened only if something needs it later. A segment that is missing or fails its checks
   * is left to the index (which rebuilds it), which is then opened here.
   *
   * @param key the cache's key, which its sealed manifest names
   * @param description the cache's description for {@value #META_FILE}
   * @throws CacheIndex.Timeout when another process holds the index's creation lock too long
   */
  static CacheStore open(Path dir, Schema schema, Geometry geometry, String key, String description, String owner,
      long waitNanos) throws CacheIndex.Timeout {
    Path path = dir.toAbsolutePath().normalize();
    CacheStore s = OPEN.get(path);
    if (s != null) {
      s.checkSame(schema, geometry);
      return s;
    }
    synchronized (OPEN) {
      s = OPEN.get(path);
      if (s != null) {
        s.checkSame(schema, geometry);
        return s;
      }
      PrivateDirs.ensure(path);
      CacheFiles.writeDescription(path, description);
      long started = System.nanoTime();
      s = new CacheStore(path, schema, geometry, key, owner, waitNanos);
      IndexEntry[] sealed = SealedManifest.read(path, key, geometry);
      if (sealed != null) {
        s.openSealed(sealed);
        if (s.segments.complete() != null) {
          PassCounters.LOG.debug("cache {} sealed: {} segments opened without the index in {} ms", path, sealed.length,
              TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        }
      }
      if (s.segments.complete() == null) {
        s.index();
      }
      OPEN.put(path, s);
      return s;
    }
  }

  /** The store of {@code dir} this process has open, else null. */
  static CacheStore opened(Path dir) {
    return OPEN.get(dir.toAbsolutePath().normalize());
  }

  /** Closes the store of {@code dir} in this process, if open (its segments' views stay valid). */
  static void release(Path dir) {
    CacheStore s;
    synchronized (OPEN) {
      s = OPEN.remove(dir.toAbsolutePath().normalize());
    }
    if (s != null) {
      s.closeIndex();
    }
  }

  private synchronized void closeIndex() {
    released = true;
    if (index != null) {
      index.close();
    }
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
  synchronized CacheIndex index() throws CacheIndex.Timeout {
    if (index == null) {
      if (released) {
        throw new CacheIndex.Timeout(dir + " was closed in this process");
      }
      CacheIndex opened = CacheIndex.open(dir, entries, openWaitNanos);
      if (opened.recovered()) {
        CacheFiles.removeOrphans(dir, opened);
      }
      index = opened;
    }
    return index;
  }

  /** Whether this process has opened the cache's index (a sealed cache whose segments all pass is read without). */
  synchronized boolean indexOpened() {
    return index != null;
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
      if (sealed || released) {
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

  /** False once {@link #release} closed this store: a pass then opens the directory afresh. */
  synchronized boolean isOpen() {
    return !released;
  }

  private void checkSame(Schema s, Geometry g) {
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

  /** What this process already knows of {@code block} in this pass: open here, or served from upstream; else null. */
  private Decision known(long block, PassCounters pass) {
    Segment s = segments.get(block);
    if (s != null) {
      return Decision.hit(s);
    }
    PassCounters.Bypass bypassed = pass.bypassed(block);
    return bypassed == null ? null : Decision.upstream(bypassed);
  }

  /**
   * What to do with {@code block}: read its segment ({@code HIT}), fill it ({@code FILL}: this
   * thread holds the claim and must end it with {@link #publish} or {@link #release}), or serve it
   * from upstream ({@code UPSTREAM}).
   */
  Decision decide(long block, PassCounters pass, long timeoutNanos) {
    Decision known = known(block, pass);
    if (known != null) {
      return known;
    }
    Segment s;
    long deadline = System.nanoTime() + timeoutNanos;
    while (true) {
      s = segments.get(block);
      if (s != null) {
        return Decision.hit(s);
      }
      CompletableFuture<Void> mine = new CompletableFuture<>();
      CompletableFuture<Void> other = inProcess.putIfAbsent(block, mine);
      if (other != null) { // another thread of this process is deciding or filling the block
        if (!await(other, deadline)) {
          pass.warnOnce("wait", dir + ": block " + block + " has been filled by another thread of this process for"
              + " more than " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms; served from upstream");
          pass.bypass(block, PassCounters.Bypass.FALLBACK);
          return Decision.upstream(PassCounters.Bypass.FALLBACK);
        }
        continue;
      }
      boolean handedOver = false;
      try {
        Decision d = decideOwned(block, pass, deadline, timeoutNanos, mine);
        handedOver = d.kind == Decision.Kind.FILL;
        return d;
      } finally {
        if (!handedOver) {
          inProcess.remove(block, mine);
          mine.complete(null);
        }
      }
    }
  }

  /**
   * {@link #decide} when it needs no wait: a published block ({@code HIT}), an absent one this thread
   * now claims ({@code FILL}), one this pass serves from upstream or the budget keeps out
   * ({@code UPSTREAM}); null when another thread or process is filling it, or the index is slow.
   */
  Decision tryDecide(long block, PassCounters pass) {
    Decision known = known(block, pass);
    if (known != null || pass.slowIndex()) {
      return null;
    }
    CompletableFuture<Void> mine = new CompletableFuture<>();
    if (inProcess.putIfAbsent(block, mine) != null) {
      return null;
    }
    boolean handedOver = false;
    try {
      long deadline = System.nanoTime() + 100_000_000L;
      IndexEntry e = index().get(block, wait(pass, deadline));
      if (e != null && e.published()) {
        try {
          return hit(segments.open(block, e, true));
        } catch (DatasetException bad) {
          return null; // decide() rebuilds it
        }
      }
      if (e != null) {
        return null;
      }
      if (budget.reached(pass)) {
        pass.bypass(block, PassCounters.Bypass.BUDGET);
        return Decision.upstream(PassCounters.Bypass.BUDGET);
      }
      IndexEntry claim = Claims.claim(geometry.blockSize(block));
      if (index().putIfAbsent(block, claim, wait(pass, deadline))) {
        handedOver = true;
        return new Decision(Decision.Kind.FILL, null, claim, null, mine);
      }
      return null;
    } catch (CacheIndex.Timeout t) {
      pass.indexWasSlow();
      return null;
    } finally {
      if (!handedOver) {
        inProcess.remove(block, mine);
        mine.complete(null);
      }
    }
  }

  /** A hit on a segment just opened, after sealing the cache if that segment completed it. */
  private Decision hit(Segment s) {
    sealIfComplete();
    return Decision.hit(s);
  }

  private Decision decideOwned(long block, PassCounters pass, long deadline, long timeoutNanos,
      CompletableFuture<Void> token) {
    long pause = 100_000;
    try {
      while (true) {
        IndexEntry e = index().get(block, wait(pass, deadline));
        if (e == null) {
          if (budget.reached(pass)) {
            pass.bypass(block, PassCounters.Bypass.BUDGET);
            return Decision.upstream(PassCounters.Bypass.BUDGET);
          }
          IndexEntry claim = Claims.claim(geometry.blockSize(block));
          if (index().putIfAbsent(block, claim, wait(pass, deadline))) {
            return new Decision(Decision.Kind.FILL, null, claim, null, token);
          }
          continue;
        }
        if (e.published()) {
          try {
            return hit(segments.open(block, e, true));
          } catch (DatasetException bad) {
            discard(block, e, bad, pass, deadline);
            continue; // rebuilt
          }
        }
        if (e.claimed() && (!Claims.alive(e) || Claims.stale(e, timeoutNanos))) {
          IndexEntry claim = Claims.claim(geometry.blockSize(block));
          if (index().replace(block, e, claim, wait(pass, deadline))) {
            return new Decision(Decision.Kind.FILL, null, claim, null, token);
          }
          continue;
        }
        if (!e.claimed()) {
          pass.warnOnce("entry", dir + ": the index entry of block " + block + " is not a claim nor a publication;"
              + " the block is served from upstream (sluice cache rm removes the cache)");
          pass.bypass(block, PassCounters.Bypass.FALLBACK);
          return Decision.upstream(PassCounters.Bypass.FALLBACK);
        }
        if (System.nanoTime() - deadline >= 0) {
          pass.warnOnce("claim", dir + ": block " + block + " has been filled by process " + e.pid() + " for more than "
              + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms; blocks another process is slow to fill are served"
              + " from upstream (counted as fallbacks)");
          pass.bypass(block, PassCounters.Bypass.FALLBACK);
          return Decision.upstream(PassCounters.Bypass.FALLBACK);
        }
        LockSupport.parkNanos(pause);
        pause = Math.min(pause * 2, 50_000_000);
      }
    } catch (CacheIndex.Timeout t) {
      return indexTimedOut(block, pass, t);
    }
  }

  /** The bound of one index operation: what is left of the deadline, or almost nothing once the index was slow. */
  static long wait(PassCounters pass, long deadline) {
    long left = Math.max(0, deadline - System.nanoTime());
    return pass.slowIndex() ? Math.min(left, 1_000_000) : left;
  }

  private Decision indexTimedOut(long block, PassCounters pass, CacheIndex.Timeout t) {
    pass.indexWasSlow();
    pass.warnOnce("lock", dir + ": " + t.getMessage() + " (a process killed while it held the lock leaves it held);"
        + " the blocks it guards are served from upstream for this pass and counted as fallbacks. The index is"
        + " reset when no process uses the cache any more; sluice cache rm removes it");
    pass.bypass(block, PassCounters.Bypass.FALLBACK);
    return Decision.upstream(PassCounters.Bypass.FALLBACK);
  }

  private static boolean await(CompletableFuture<Void> f, long deadline) {
    try {
      f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException e) {
      return true;
    }
  }

  // ---------------------------------------------------------------- segments

  /** A published segment that is unreadable: removed from the index and deleted, so the block is rebuilt. */
  private void discard(long block, IndexEntry e, DatasetException bad, PassCounters pass, long deadline)
      throws CacheIndex.Timeout {
    pass.warnOnce("corrupt " + block, "cache segment " + bad.getMessage() + "; the block is rebuilt from upstream");
    pass.fallback();
    unseal();
    if (index().remove(block, e, wait(pass, deadline))) {
      index().add(CacheIndex.BYTES_KEY, -e.bytes(), Long.MAX_VALUE, wait(pass, deadline));
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
          || index().counter(CacheIndex.BYTES_KEY, wait(pass, deadline)) + batch.byteSize() > max)) {
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
      reserved = index().add(CacheIndex.BYTES_KEY, written.bytes(), max, wait(pass, deadline)) < 0 ? 0 : written.bytes();
      if (reserved == 0) {
        budget.markReached(pass);
        pass.bypass(block, PassCounters.Bypass.BUDGET);
        return null;
      }
      IndexEntry mine = Claims.publication(batch.size(), written.bytes(), written.checksum(), d.claim.nonce());
      IndexEntry winner = mine;
      if (!index().replace(block, d.claim, mine, wait(pass, deadline))) {
        // the claim was taken over (this process looked dead or slow): publish unless someone already did
        IndexEntry now = index().get(block, wait(pass, deadline));
        if (now != null && now.published()) {
          winner = now;
        } else if (now == null ? !index().putIfAbsent(block, mine, wait(pass, deadline))
            : !index().replace(block, now, mine, wait(pass, deadline))) {
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
      indexTimedOut(block, pass, t);
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
        release(block, d, pass);
      } else {
        finish(block, d);
      }
    }
  }

  /** Ends a claim this thread holds without publishing (the fill failed, was cancelled or was not stored). */
  void release(long block, Decision d, PassCounters pass) {
    try {
      index().remove(block, d.claim, pass.slowIndex() ? 1_000_000 : 100_000_000);
    } catch (CacheIndex.Timeout t) {
      pass.indexWasSlow(); // the claim stays; others take it over once it is stale or this process is gone
    } finally {
      finish(block, d);
    }
  }

  private void finish(long block, Decision d) {
    inProcess.remove(block, d.token);
    d.token.complete(null);
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
        IndexEntry e = index().get(b, wait(pass, deadline));
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
