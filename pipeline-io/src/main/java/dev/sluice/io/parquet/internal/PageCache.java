package dev.sluice.io.parquet.internal;

import dev.sluice.core.spi.BudgetRequests;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.parquet.column.page.DataPage;
import org.apache.parquet.column.page.DictionaryPage;

/**
 * The decompressed pages that reads of part of a row group cut: a data page that holds rows before
 * or after the rows a read asked for is kept here, with its levels once decoded ({@link Levels}),
 * so the reads of its other rows (a block shuffle reads one large page as many blocks) neither read
 * nor decompress nor decode its levels again; so is the dictionary page of the chunk, decoded once.
 * Least recently used pages are dropped once the kept pages weigh more than the cache's budget; a
 * page weighing more than a quarter of it is not kept. The budget is read on each {@link #put}: the
 * {@link #shared()} cache's is the largest {@code Options.pageCacheBytes} of the pipelines running
 * now ({@link BudgetRequests#PAGE_CACHE}), else {@link #DEFAULT_BYTES}.
 * Keys name the file by its {@link ParquetFileInfo} (pages of a released file are dropped with
 * {@link #forget}). Entries are never modified after they are complete. Thread-safe; on the heap.
 */
final class PageCache {
  /** The budget of the shared cache while no running pipeline asks for one: 64 MiB. */
  static final long DEFAULT_BYTES = 64L << 20;

  private static final PageCache SHARED = new PageCache(PageCache::requestedBudget);

  /** Where a page is: file, row group, column path, byte offset of its header; and whether its checksum was verified. */
  record Key(Object file, int rowGroup, String column, long offset, boolean verified) {}

  /**
   * A kept page: the page, the file position after it, its rows (-1 when only its levels tell) and
   * its weight; {@link #levels} are set once by the first reader that decodes them.
   */
  static final class Entry {
    final DataPage page;
    final DictionaryPage dictionary;
    final long next;
    final long rows;
    final long bytes;
    private volatile Levels levels;
    private volatile PageDictionary decoded;

    /** A data page. */
    Entry(DataPage page, long next, long rows, long bytes) {
      this.page = page;
      this.dictionary = null;
      this.next = next;
      this.rows = rows;
      this.bytes = bytes;
    }

    /** A dictionary page. */
    Entry(DictionaryPage dictionary, long next, long bytes) {
      this.page = null;
      this.dictionary = dictionary;
      this.next = next;
      this.rows = 0;
      this.bytes = bytes;
    }

    /** The dictionary page decoded, or null when no reader decoded it yet. */
    PageDictionary decoded() {
      return decoded;
    }

    /** Keeps the dictionary page decoded (read only from now on). */
    void decoded(PageDictionary d) {
      decoded = d;
    }

    /** The page's decoded levels, or null when no reader decoded them yet. */
    Levels levels() {
      return levels;
    }

    /** Keeps the page's decoded levels (arrays nobody writes to any more). */
    void levels(Levels decoded) {
      levels = decoded;
    }
  }

  /**
   * A page's decoded levels as {@link PageLevels} holds them, shared read-only: {@code defs} is null
   * when every definition level is the maximum, {@code reps} null when there are none or they are
   * whole lists of the fixed length; {@code data} is read through duplicates only.
   */
  record Levels(int count, int[] defs, int[] reps, boolean defsAllMax, boolean repsPlain, int nonNull,
      java.nio.ByteBuffer data, int dataPos, org.apache.parquet.column.Encoding encoding) {}

  private final LongSupplier budget;
  private final LinkedHashMap<Key, Entry> pages = new LinkedHashMap<>(64, 0.75f, true);
  private long bytes;

  /** A cache whose budget, read on each {@link #put}, is {@code budget}'s (bytes, &gt;= 0). */
  PageCache(LongSupplier budget) {
    this.budget = budget;
  }

  /** The largest budget the running pipelines ask for, else {@link #DEFAULT_BYTES}. */
  static long requestedBudget() {
    long requested = BudgetRequests.PAGE_CACHE.largest();
    return requested >= 0 ? requested : DEFAULT_BYTES;
  }

  /** The cache of the process's Parquet reads. */
  static PageCache shared() {
    return SHARED;
  }

  /** The page kept at {@code key}, or null. */
  synchronized Entry get(Key key) {
    return pages.get(key);
  }

  /**
   * Keeps {@code entry} at {@code key} (unless it weighs more than a quarter of the budget), then
   * drops the least recently used pages over the budget (those kept under a larger one too).
   */
  synchronized void put(Key key, Entry entry) {
    long maxBytes = budget.getAsLong();
    if (entry.bytes <= maxBytes / 4) {
      Entry old = pages.put(key, entry);
      bytes += entry.bytes - (old == null ? 0 : old.bytes);
    }
    Iterator<Map.Entry<Key, Entry>> it = pages.entrySet().iterator();
    while (bytes > maxBytes && it.hasNext()) {
      bytes -= it.next().getValue().bytes;
      it.remove();
    }
  }

  /** Drops every page of {@code file}. */
  synchronized void forget(Object file) {
    Iterator<Map.Entry<Key, Entry>> it = pages.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<Key, Entry> e = it.next();
      if (e.getKey().file() == file) {
        bytes -= e.getValue().bytes;
        it.remove();
      }
    }
  }

  /** Drops every page, as if none had been kept yet. */
  synchronized void clear() {
    pages.clear();
    bytes = 0;
  }

  /** The pages kept. */
  synchronized int size() {
    return pages.size();
  }

  /** The weight of the pages kept. */
  synchronized long bytes() {
    return bytes;
  }
}
