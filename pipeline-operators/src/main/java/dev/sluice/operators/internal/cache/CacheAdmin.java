package dev.sluice.operators.internal.cache;

import dev.sluice.core.internal.OptionalLibrary;
import dev.sluice.operators.CacheException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Listing, explaining and removing caches and staged data under a cache root, for
 * {@code sluice cache ls|info|rm}; and closing a cache this process has open.
 */
public final class CacheAdmin {
  /** The subdirectory of a root that holds staged datasets. */
  public static final String STAGED = "staged";
  private static final String CACHE_PREFIX = "cache-";

  private CacheAdmin() {}

  /** What a directory under a cache root is. */
  public enum Kind {
    /** A cache ({@code cache-<key>/} holding {@code cache.json}). */
    CACHE,
    /** A dataset staged by {@code sluice stage} ({@code staged/<name>/}). */
    STAGED
  }

  /**
   * One entry of a listing.
   *
   * @param kind cache or staged data
   * @param path its directory
   * @param bytes bytes of its files
   * @param description the cache's {@code cache.json} text, or null (staged data, or a cache without one)
   */
  public record Entry(Kind kind, Path path, long bytes, String description) {}

  /**
   * What the index of a cache holds.
   *
   * @param blocks the cache's blocks
   * @param published blocks published
   * @param claimed blocks claimed (being filled, or left by a process that died)
   * @param segmentBytes bytes of the published segments as the index counts them
   * @param orphans files no published block names (temporary files, unpublished segments)
   */
  public record Index(long blocks, long published, long claimed, long segmentBytes, int orphans) {}

  /** The caches and staged datasets under {@code root}, in name order (empty when it does not exist). */
  public static List<Entry> list(Path root) {
    List<Entry> out = new ArrayList<>();
    if (!Files.isDirectory(root)) {
      return out;
    }
    PrivateDirs.check(root);
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(root)) {
      for (Path d : dirs) {
        String name = d.getFileName().toString();
        if (name.startsWith(CACHE_PREFIX) && Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
          Path meta = d.resolve(CacheStore.META_FILE);
          out.add(new Entry(Kind.CACHE, d, bytes(d), Files.isRegularFile(meta) ? Files.readString(meta) : null));
        }
      }
      Path staged = root.resolve(STAGED);
      if (Files.isDirectory(staged, LinkOption.NOFOLLOW_LINKS)) {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(staged)) {
          for (Path d : s) {
            if (Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS) && !d.getFileName().toString().startsWith(".")) {
              out.add(new Entry(Kind.STAGED, d, bytes(d), null));
            }
          }
        }
      }
    } catch (IOException e) {
      throw new CacheException(root.toString(), "cannot list: " + e, e);
    }
    out.sort((a, b) -> a.path().toString().compareTo(b.path().toString()));
    return out;
  }

  /** True when {@code dir} is a cache directory (it holds {@code cache.json}). */
  public static boolean isCache(Path dir) {
    return Files.isRegularFile(dir.resolve(CacheStore.META_FILE), LinkOption.NOFOLLOW_LINKS);
  }

  /**
   * Opens the index of the cache in {@code dir} (as one more user: safe while other processes use
   * it) and counts what it holds.
   *
   * @throws CacheException when it is not a cache, or its index cannot be opened within
   *     {@code waitNanos}
   * @throws dev.sluice.core.MissingDependencyException when Chronicle Map is not on the class path
   */
  public static Index index(Path dir, long waitNanos) {
    if (!isCache(dir)) {
      throw new CacheException(dir.toString(), "is not a cache directory (no " + CacheStore.META_FILE + ")", null);
    }
    OptionalLibrary.CHRONICLE_MAP.require(dir.toString());
    PrivateDirs.check(dir);
    JvmFlags.check(dir.toString());
    long blocks;
    Path meta = dir.resolve(CacheStore.META_FILE);
    try {
      PrivateDirs.tighten(meta);
      blocks = number(Files.readString(meta), "blocks", meta);
    } catch (IOException e) {
      throw new CacheException(meta.toString(), "cannot read the cache's description: " + e, e);
    }
    CacheRegistry.release(dir); // one index per process and directory
    try (CacheIndex index = CacheIndex.open(dir, blocks + 8, waitNanos)) {
      long[] counts = new long[2];
      List<String> named = new ArrayList<>();
      index.forEachKey(k -> {
        try {
          IndexEntry e = index.get(k, waitNanos);
          if (e != null && e.published()) {
            counts[0]++;
            named.add(CacheStore.segmentName(k, e.nonce()));
          } else if (e != null && e.claimed()) {
            counts[1]++;
          }
        } catch (CacheIndex.Timeout t) {
          throw new CacheException(dir.toString(), t.getMessage(), null);
        }
      });
      long bytes = index.counter(CacheIndex.BYTES_KEY, waitNanos);
      int orphans = 0;
      try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
        for (Path f : files) {
          String name = f.getFileName().toString();
          if (name.startsWith(".block-") || name.startsWith("block-") && !named.contains(name)) {
            orphans++;
          }
        }
      }
      return new Index(blocks, counts[0], counts[1], bytes, orphans);
    } catch (CacheIndex.Timeout t) {
      throw new CacheException(dir.toString(), t.getMessage(), null);
    } catch (IOException e) {
      throw new CacheException(dir.toString(), "cannot list: " + e, e);
    }
  }

  /**
   * The integer value of {@code "name": N} in the text of {@code file}, a {@code cache.json}.
   *
   * @throws CacheException naming the cache and {@code file} when the value is missing
   */
  static long number(String json, String name, Path file) {
    Matcher m = Pattern.compile("\"" + Pattern.quote(name) + "\"\\s*:\\s*(\\d+)").matcher(json);
    if (!m.find()) {
      throw new CacheException(file.toString(), "the description of the cache " + file.getParent() + " has no \""
          + name + "\" (truncated or damaged); remove the cache (sluice cache rm " + file.getParent() + ")", null);
    }
    return Long.parseLong(m.group(1));
  }

  /**
   * True when a process other than this one has the cache in {@code dir} open (it holds
   * {@code users.lock}).
   */
  public static boolean inUse(Path dir) {
    Path users = dir.resolve(CacheIndex.USERS_FILE);
    if (!Files.exists(users)) {
      return false;
    }
    CacheRegistry.release(dir);
    try (FileChannel ch = FileChannel.open(users, StandardOpenOption.WRITE)) {
      FileLock l = ch.tryLock(0, Long.MAX_VALUE, false);
      if (l == null) {
        return true;
      }
      l.release();
      return false;
    } catch (IOException e) {
      throw new CacheException(dir.toString(), "cannot tell whether the cache is in use: " + e, e);
    }
  }

  /**
   * Deletes a cache or staged directory (its views already handed out stay valid: mappings outlive
   * the files).
   */
  public static void remove(Path dir) {
    CacheRegistry.release(dir);
    try {
      SealedManifest.delete(dir); // first: no new reader is sent to a segment being deleted
      deleteTree(dir);
    } catch (IOException e) {
      throw new CacheException(dir.toString(), "cannot remove: " + e, e);
    }
  }

  /** Deletes {@code dir} and everything under it, links as links (never what they point to). */
  public static void deleteTree(Path dir) throws IOException {
    Files.walkFileTree(dir, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
          Files.delete(file);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
          if (e != null) {
            throw e;
          }
          Files.delete(d);
          return FileVisitResult.CONTINUE;
        }
      });
  }

  /**
   * Prepares the cache's index machinery (Chronicle Map's classes) on a daemon thread, for a
   * program that knows early that it will open a cache; opening one waits for it to finish.
   */
  public static void warmUpInBackground() {
    CacheIndex.warmUpInBackground();
  }

  /** Closes the cache in {@code dir} if this process has it open (its views stay valid). */
  public static void closeInThisProcess(Path dir) {
    CacheRegistry.release(dir);
  }

  /** {@code 64.0 MiB}: a byte count for messages. */
  public static String bytes(long n) {
    String[] units = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = n;
    int u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return u == 0 ? n + " bytes" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }

  /** Bytes of the regular files under {@code dir}. */
  static long bytes(Path dir) throws IOException {
    long[] n = {0};
    Files.walkFileTree(dir, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
        if (attrs.isRegularFile()) {
          n[0] += attrs.size();
        }
        return FileVisitResult.CONTINUE;
      }
    });
    return n[0];
  }
}
