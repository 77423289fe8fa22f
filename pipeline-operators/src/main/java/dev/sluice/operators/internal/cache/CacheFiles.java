package dev.sluice.operators.internal.cache;

import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.operators.CacheException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
    deleteUnreferenced(dir, referenced, false);
  }

  /**
   * {@link #removeOrphans} for a sealed cache, whose index this process does not open: deletes
   * temporary files and the segments {@code referenced} (the manifest's) does not name, only while
   * no process uses the index. It holds the index's creation lock and then the users lock
   * exclusively while it deletes, as recovering the index does, so no process opens the index and
   * starts a segment meanwhile; when either lock is taken (another process uses the cache, or this
   * one does), it deletes nothing. Best effort.
   */
  static void removeOrphansUnlessUsed(Path dir, Set<String> referenced) {
    Path lockFile = dir.resolve(CacheIndex.LOCK_FILE);
    Path usersFile = dir.resolve(CacheIndex.USERS_FILE);
    if (!Files.isRegularFile(lockFile, LinkOption.NOFOLLOW_LINKS)
        || !Files.isRegularFile(usersFile, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (FileChannel lockChannel = FileChannel.open(lockFile, StandardOpenOption.WRITE);
        FileLock creating = lockChannel.tryLock()) {
      if (creating == null) {
        return;
      }
      try (FileChannel users = FileChannel.open(usersFile, StandardOpenOption.WRITE);
          FileLock alone = users.tryLock()) {
        if (alone != null) {
          deleteUnreferenced(dir, referenced, true);
        }
      }
    } catch (IOException | OverlappingFileLockException busy) {
      // the cache is in use (by this process too): its orphans wait for the next lone opener
    }
  }

  /**
   * Deletes the temporary files of {@code dir} and the segments {@code referenced} does not name;
   * unless {@code referencedBySeal} (the names are the sealed manifest's), the manifest goes first.
   */
  private static void deleteUnreferenced(Path dir, Set<String> referenced, boolean referencedBySeal) {
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
      for (Path f : files) {
        String name = f.getFileName().toString();
        boolean temp = name.startsWith("." + SEGMENT_PREFIX); // a segment's temporary or spill file
        boolean segment = name.startsWith(SEGMENT_PREFIX) && name.endsWith(SEGMENT_SUFFIX);
        if (temp) {
          deleteQuietly(f);
        } else if (segment && !referenced.contains(name)) {
          if (!referencedBySeal) {
            deleteQuietly(dir.resolve(SealedManifest.FILE)); // first: no new reader is sent to the segment
          }
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
