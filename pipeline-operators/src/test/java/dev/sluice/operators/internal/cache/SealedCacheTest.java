package dev.sluice.operators.internal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Tensor;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.operators.CacheMonitor;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.CacheStats;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** A sealed cache: its manifest is written once every block is published and lets a later reader skip the index. */
@ExtendWith(NoLeaks.class)
class SealedCacheTest {
  @TempDir Path dir;

  private final RandomAccessDataset<Example> src = Datasets.synthetic(3000, 8, 7);
  private final CacheMonitor monitor = new CacheMonitor();

  private Pipeline<Example> cached() {
    return Pipeline.from(src).cache(CacheSpec.defaults().directory(dir.resolve("root")).blockRows(500).monitor(monitor));
  }

  private static List<String> elements(Pipeline<Example> p) {
    return p.flux(PipelineContext.defaults()).map(SealedCacheTest::row).collectList().block();
  }

  private static String row(Example e) {
    StringBuilder sb = new StringBuilder().append(e.index());
    for (String name : e.names()) {
      Tensor t = e.tensor(name);
      sb.append(':').append(name).append('=').append(t.dtype()).append(t.shape())
          .append(HexFormat.of().formatHex(t.toByteArray()));
    }
    return sb.toString();
  }

  /** Fills the cache in this process and closes it, as a later process finds it; returns its directory. */
  private Path filledAndClosed(List<String> expected) throws IOException {
    assertEquals(expected, elements(cached()));
    Path cacheDir;
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir.resolve("root"), "cache-*")) {
      cacheDir = s.iterator().next();
    }
    assertTrue(Files.exists(cacheDir.resolve(SealedManifest.FILE)), "the process that published the last block seals");
    CacheAdmin.closeInThisProcess(cacheDir);
    return cacheDir;
  }

  private static List<Path> segments(Path cacheDir) throws IOException {
    List<Path> out = new ArrayList<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(cacheDir, "block-*.shard")) {
      s.forEach(out::add);
    }
    out.sort(null);
    return out;
  }

  @Test
  void aSealedCacheIsReadFromItsSegmentsWithoutOpeningTheIndex() throws IOException {
    List<String> expected = elements(Pipeline.from(src));
    Path cacheDir = filledAndClosed(expected);
    assertEquals(expected, elements(cached()));
    assertEquals(new CacheStats(3000, 0, 0, 0, 0, 0), monitor.lastPass());
    assertFalse(CacheStore.opened(cacheDir).indexOpened(), "a sealed cache is read without its index");
  }

  @Test
  void aSealedReadRemovesWhatAKilledProcessLeftWhenNoProcessUsesTheCache() throws IOException {
    List<String> expected = elements(Pipeline.from(src));
    Path cacheDir = filledAndClosed(expected);
    List<Path> published = segments(cacheDir);
    // what a process killed while filling leaves: a temporary segment, and a segment no entry names
    Path temp = Files.writeString(cacheDir.resolve("." + CacheFiles.segmentName(3, 77) + ".tmp"), "torn");
    Path unnamed = Files.writeString(cacheDir.resolve(CacheFiles.segmentName(3, 77)), "never published");
    assertEquals(expected, elements(cached()));
    assertFalse(CacheStore.opened(cacheDir).indexOpened(), "still read without the index");
    assertFalse(Files.exists(temp), "the temporary file is removed");
    assertFalse(Files.exists(unnamed), "the unnamed segment is removed");
    assertEquals(published, segments(cacheDir), "every published segment stays");
    assertTrue(Files.exists(cacheDir.resolve(SealedManifest.FILE)), "the cache stays sealed");
    CacheAdmin.closeInThisProcess(cacheDir);
    assertEquals(0, CacheAdmin.index(cacheDir, 30_000_000_000L).orphans());
  }

  @Test
  void aSegmentDeletedAfterSealingIsRebuiltThroughTheIndexWithExactValues() throws IOException {
    List<String> expected = elements(Pipeline.from(src));
    Path cacheDir = filledAndClosed(expected);
    Path gone = segments(cacheDir).get(2);
    Files.delete(gone);
    assertEquals(expected, elements(cached()));
    CacheStats s = monitor.lastPass();
    assertEquals(1, s.fallbacks(), s.toString());
    assertEquals(1, s.blocksWritten(), s.toString());
    assertEquals(500, s.misses(), s.toString());
    assertTrue(CacheStore.opened(cacheDir).indexOpened());
    assertFalse(segments(cacheDir).contains(gone));

    // sealed again once complete: the next process reads it without the index
    IndexEntry[] resealed = SealedManifest.read(cacheDir, keyOf(cacheDir), geometry());
    assertNotNull(resealed);
    CacheAdmin.closeInThisProcess(cacheDir);
    assertEquals(expected, elements(cached()));
    assertEquals(0, monitor.lastPass().misses());
    assertFalse(CacheStore.opened(cacheDir).indexOpened());
  }

  @Test
  void aTornOrGarbageManifestIsIgnored() throws IOException {
    List<String> expected = elements(Pipeline.from(src));
    Path cacheDir = filledAndClosed(expected);
    Path manifest = cacheDir.resolve(SealedManifest.FILE);
    String key = keyOf(cacheDir);
    byte[] good = Files.readAllBytes(manifest);
    List<byte[]> bad = List.of(
        java.util.Arrays.copyOf(good, good.length / 2),
        flip(good, good.length / 3),
        "sluice-cache-sealed 1\nnonsense\n".getBytes(StandardCharsets.UTF_8),
        new byte[0]);
    for (byte[] b : bad) {
      Files.write(manifest, b);
      assertNull(SealedManifest.read(cacheDir, key, geometry()));
      assertEquals(expected, elements(cached()));
      assertEquals(0, monitor.lastPass().misses());
      assertEquals(0, monitor.lastPass().fallbacks());
      assertTrue(CacheStore.opened(cacheDir).indexOpened(), "an unusable manifest sends the reader to the index");
      assertNotNull(SealedManifest.read(cacheDir, key, geometry()), "rewritten once every block is open");
      CacheAdmin.closeInThisProcess(cacheDir);
    }
  }

  /**
   * A manifest whose checksum is valid but whose segment name would reach outside the cache
   * directory (a path separator, {@code ..}, an absolute path) is refused like a damaged one: the
   * reader goes to the index and serves exact values.
   */
  @Test
  void aManifestNamingASegmentOutsideTheDirectoryIsIgnored() throws IOException {
    List<String> expected = elements(Pipeline.from(src));
    Path cacheDir = filledAndClosed(expected);
    Path manifest = cacheDir.resolve(SealedManifest.FILE);
    String key = keyOf(cacheDir);
    String good = Files.readString(manifest);
    String body = good.substring(0, good.lastIndexOf("crc32c "));
    String name = segments(cacheDir).get(1).getFileName().toString();
    Path outside = dir.resolve("outside");
    Files.createDirectories(outside);
    Files.copy(segments(cacheDir).get(1), outside.resolve(name));
    List<String> names = List.of("../" + cacheDir.getFileName() + "/" + name, "./" + name, "sub/" + name,
        "..\\" + name, outside.resolve(name).toString(), "../outside/" + name);
    for (String evil : names) {
      String forged = body.replace(" " + name + " ", " " + evil + " ");
      Files.writeString(manifest, forged + "crc32c " + crc32c(forged) + "\n");
      assertNull(SealedManifest.read(cacheDir, key, geometry()), evil);
      assertEquals(expected, elements(cached()), evil);
      assertTrue(CacheStore.opened(cacheDir).indexOpened(), evil + ": the reader goes to the index");
      CacheAdmin.closeInThisProcess(cacheDir);
    }
  }

  private static String crc32c(String text) {
    java.util.zip.CRC32C c = new java.util.zip.CRC32C();
    c.update(text.getBytes(StandardCharsets.UTF_8));
    return String.format(java.util.Locale.ROOT, "%08x", c.getValue());
  }

  @Test
  void removingTheCacheDeletesTheManifestFirst() throws IOException {
    List<String> expected = elements(Pipeline.from(src));
    Path cacheDir = filledAndClosed(expected);
    CacheAdmin.remove(cacheDir);
    assertFalse(Files.exists(cacheDir));
    assertEquals(expected, elements(cached()));
    assertEquals(3000, monitor.lastPass().misses());
  }

  private static Geometry geometry() {
    return Geometry.of(500, 3000);
  }

  private static byte[] flip(byte[] b, int at) {
    byte[] c = b.clone();
    c[at] ^= 0x01;
    return c;
  }

  /** The key the manifest of {@code cacheDir} names (its second line). */
  private static String keyOf(Path cacheDir) throws IOException {
    for (String line : Files.readAllLines(cacheDir.resolve(SealedManifest.FILE))) {
      if (line.startsWith("key ")) {
        return line.substring(4);
      }
    }
    throw new AssertionError("no key in the manifest of " + cacheDir);
  }
}
