package dev.sluice.operators.internal.cache;

import dev.sluice.core.internal.AtomicOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.zip.CRC32C;

/**
 * The manifest of a sealed cache ({@value #FILE}): every block published, and per block what the
 * index holds for it (segment file, rows, length, footer checksum), so that a later process serves
 * the whole cache from its segments without opening the index. Text, one record a line, ending with
 * the CRC-32C of everything before it:
 *
 * <pre>
 * sluice-cache-sealed 1
 * key KEY
 * block-rows N
 * blocks N
 * rows N
 * BLOCK FILE ROWS BYTES CHECKSUM      (one line per block, in order; CHECKSUM in hex)
 * crc32c HEX
 * </pre>
 *
 * <p>It is written atomically (a temporary file forced to disk, then renamed over the target) and
 * only describes entries the index publishes; anything that deletes or replaces a segment deletes
 * the manifest first. A manifest that is torn, of another key or geometry, or otherwise unreadable
 * is ignored: the cache is then read through the index. So is one whose checksum holds but that
 * names any other file than its block's segment in the cache directory ({@link
 * CacheFiles#segmentName}: no path separator, {@code ..} or absolute path).
 */
final class SealedManifest {
  /** The manifest's file name in the cache directory. */
  static final String FILE = "sealed.txt";
  private static final String MAGIC = "sluice-cache-sealed 1";

  private SealedManifest() {}

  /**
   * The published entries the manifest of {@code dir} holds, indexed by block, when it is intact
   * and describes the cache of {@code key} with {@code geometry}; else null.
   *
   * @throws dev.sluice.operators.CacheException naming the manifest when it is a link or another user's
   */
  static IndexEntry[] read(Path dir, String key, Geometry geometry) {
    String text;
    PrivateDirs.tighten(dir.resolve(FILE));
    try {
      byte[] bytes = Files.readAllBytes(dir.resolve(FILE));
      if (bytes.length > 64 + 96 * geometry.blockCount() + 4096) {
        return null;
      }
      text = new String(bytes, StandardCharsets.UTF_8);
    } catch (NoSuchFileException absent) {
      return null;
    } catch (IOException | OutOfMemoryError unreadable) {
      return null;
    }
    try {
      return parse(text, key, geometry);
    } catch (RuntimeException garbage) {
      return null;
    }
  }

  private static IndexEntry[] parse(String text, String key, Geometry geometry) {
    int tail = text.lastIndexOf("crc32c ");
    if (tail <= 0 || !text.endsWith("\n") || text.charAt(tail - 1) != '\n') {
      return null;
    }
    String body = text.substring(0, tail);
    if (!text.substring(tail + 7, text.length() - 1).equals(crc(body))) {
      return null;
    }
    String[] lines = body.split("\n");
    long blocks = geometry.blockCount();
    if (lines.length != 5 + blocks || !lines[0].equals(MAGIC) || !lines[1].equals("key " + key)
        || !lines[2].equals("block-rows " + geometry.blockRows()) || !lines[3].equals("blocks " + blocks)
        || !lines[4].equals("rows " + geometry.rows())) {
      return null;
    }
    IndexEntry[] entries = new IndexEntry[(int) blocks];
    for (int b = 0; b < blocks; b++) {
      String[] f = lines[5 + b].split(" ");
      if (f.length != 5 || Long.parseLong(f[0]) != b || Long.parseLong(f[2]) != geometry.blockSize(b)) {
        return null;
      }
      long nonce = nonceOf(b, f[1]);
      entries[b] = new IndexEntry(IndexEntry.PUBLISHED, 0, 0, 0, Long.parseLong(f[2]), Long.parseLong(f[3]),
          Integer.parseUnsignedInt(f[4], 16), nonce);
    }
    return entries;
  }

  /** The nonce in {@code name} when it is the segment name of {@code block}; else an exception. */
  private static long nonceOf(long block, String name) {
    String prefix = CacheFiles.segmentName(block, 0);
    prefix = prefix.substring(0, prefix.length() - 16 - ".shard".length());
    if (!name.startsWith(prefix) || !name.endsWith(".shard") || name.length() != prefix.length() + 16 + 6) {
      throw new IllegalArgumentException(name);
    }
    long nonce = Long.parseUnsignedLong(name.substring(prefix.length(), prefix.length() + 16), 16);
    if (!CacheFiles.segmentName(block, nonce).equals(name)) {
      throw new IllegalArgumentException(name);
    }
    return nonce;
  }

  /**
   * Writes the manifest of {@code entries} (the published entry of every block, in order)
   * atomically, replacing any.
   *
   * @throws IOException when it cannot be written (nothing is left then but the previous manifest, if any)
   */
  static void write(Path dir, String key, Geometry geometry, IndexEntry[] entries) throws IOException {
    StringBuilder sb = new StringBuilder(MAGIC).append('\n')
        .append("key ").append(key).append('\n')
        .append("block-rows ").append(geometry.blockRows()).append('\n')
        .append("blocks ").append(geometry.blockCount()).append('\n')
        .append("rows ").append(geometry.rows()).append('\n');
    for (int b = 0; b < entries.length; b++) {
      IndexEntry e = entries[b];
      sb.append(b).append(' ').append(CacheFiles.segmentName(b, e.nonce())).append(' ').append(e.rows()).append(' ')
          .append(e.bytes()).append(' ').append(String.format(Locale.ROOT, "%08x", e.checksum())).append('\n');
    }
    String body = sb.toString();
    byte[] bytes = (body + "crc32c " + crc(body) + "\n").getBytes(StandardCharsets.UTF_8);
    try (AtomicOutput out = AtomicOutput.file(dir.resolve(FILE), PrivateDirs.fileAttributes(dir))) {
      try (FileChannel ch = FileChannel.open(out.temp(), StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        while (buf.hasRemaining()) {
          ch.write(buf);
        }
        ch.force(true);
      }
      PrivateDirs.restrict(out.temp());
      out.commit();
    }
  }

  /** Deletes the manifest of {@code dir}, if any. */
  static void delete(Path dir) throws IOException {
    Files.deleteIfExists(dir.resolve(FILE));
  }

  /** Whether {@code dir} holds a manifest (intact or not). */
  static boolean exists(Path dir) {
    return Files.exists(dir.resolve(FILE), LinkOption.NOFOLLOW_LINKS);
  }

  private static String crc(String body) {
    CRC32C c = new CRC32C();
    c.update(body.getBytes(StandardCharsets.UTF_8));
    return String.format(Locale.ROOT, "%08x", c.getValue());
  }
}
