package dev.sluice.operators.internal.cache;

import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.operators.CacheException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * The files of a cache directory: segment names, the description file, and the removal of what
 * killed processes left behind.
 */
final class CacheFiles {
  private static final String SEGMENT_PREFIX = "block-";
  private static final String SEGMENT_SUFFIX = ".shard";

  private CacheFiles() {}

  /** The file name of the segment of {@code block} published under {@code nonce}. */
  static String segmentName(long block, long nonce) {
    return String.format(Locale.ROOT, "%s%016x-%016x%s", SEGMENT_PREFIX, block, nonce, SEGMENT_SUFFIX);
  }

  /**
   * Writes the cache's description to {@value CacheStore#META_FILE} unless it is there (then only
   * tightens its permissions); a description another process wrote first is kept.
   *
   * @throws CacheException naming the directory when the file cannot be written
   */
  static void writeDescription(Path dir, String description) {
    Path meta = dir.resolve(CacheStore.META_FILE);
    if (Files.exists(meta, LinkOption.NOFOLLOW_LINKS)) {
      PrivateDirs.tighten(meta);
      return;
    }
    try (AtomicOutput out = AtomicOutput.file(meta, PrivateDirs.fileAttributes(dir))) {
      Files.writeString(out.temp(), description, StandardCharsets.UTF_8);
      PrivateDirs.restrict(out.temp());
      out.commitNew();
    } catch (FileAlreadyExistsException raced) {
      // another process described the cache first: the same description
    } catch (IOException e) {
      throw new CacheException(dir.toString(), "cannot write " + CacheStore.META_FILE + ": " + e, e);
    }
  }

  /**
   * Deletes what killed processes left: temporary files and segments no published entry names, and
   * removes every claim from the index. Called only when this process is the index's only user (it
   * just recovered it); best effort.
   */
  static void removeOrphans(Path dir, CacheIndex index) {
    Set<String> referenced = new HashSet<>();
    index.forEachKey(b -> {
      try {
        IndexEntry e = index.get(b, 100_000_000);
        if (e != null && e.published()) {
          referenced.add(segmentName(b, e.nonce()));
        } else if (e != null && e.claimed()) {
          index.remove(b, e, 100_000_000); // no process uses the cache: every claim is dead
        }
      } catch (CacheIndex.Timeout ignored) {
        // recovered just now; keep what cannot be read
      }
    });
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
      for (Path f : files) {
        String name = f.getFileName().toString();
        boolean temp = name.startsWith("." + SEGMENT_PREFIX); // a segment's temporary or spill file
        boolean segment = name.startsWith(SEGMENT_PREFIX) && name.endsWith(SEGMENT_SUFFIX);
        if (temp) {
          deleteQuietly(f);
        } else if (segment && !referenced.contains(name)) {
          deleteQuietly(dir.resolve(SealedManifest.FILE)); // first: no new reader is sent to the segment
          deleteQuietly(f);
        }
      }
    } catch (IOException ignored) {
      // best effort: orphans take space, never correctness
    }
  }

  /** Deletes {@code file} if it exists; a failure leaves it to {@link #removeOrphans}. */
  static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException ignored) {
      // an unreferenced file is removed with orphans once no process uses the cache
    }
  }
}
