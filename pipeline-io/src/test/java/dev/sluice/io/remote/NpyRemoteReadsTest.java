package dev.sluice.io.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Tensor;
import dev.sluice.io.Checksums;
import dev.sluice.io.Formats;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.directory.Directory;
import dev.sluice.io.directory.DirectoryDataset;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.io.npy.NpyStack;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Remote npy reads counted per file ({@code counted://}): how often each sample file is opened, how
 * many of its bytes are read, and what a second pass through the node-local cache reads remotely.
 */
class NpyRemoteReadsTest {
  @TempDir
  Path dir;

  @BeforeAll
  static void register() {
    RemoteFiles.configure(CountedFileSystem.settings());
  }

  @BeforeEach
  void reset() {
    CountedFileSystem.BYTES.clear();
    CountedFileSystem.FULL_READS.clear();
    CountedFileSystem.OPENS.clear();
  }

  @AfterEach
  void noLeaks() {
    MemoryManager.shared().checkNoOutstanding();
  }

  /** An .npy file: a version 1.0 header for {@code descr}, {@code fortran} and {@code shape}, then {@code data}. */
  static Path writeNpy(Path file, String descr, boolean fortran, long[] shape, byte[] data) throws IOException {
    StringBuilder tuple = new StringBuilder("(");
    for (long d : shape) {
      tuple.append(d).append(", ");
    }
    String dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': "
        + tuple.append(")") + ", }";
    int pad = 64 - (10 + dict.length() + 1) % 64;
    String header = dict + " ".repeat(pad == 64 ? 0 : pad) + "\n";
    ByteBuffer b = ByteBuffer.allocate(10 + header.length() + data.length).order(ByteOrder.LITTLE_ENDIAN);
    b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0}).putShort((short) header.length());
    b.put(header.getBytes(StandardCharsets.US_ASCII)).put(data);
    Files.createDirectories(file.getParent());
    Files.write(file, b.array());
    return file;
  }

  /** {@code samples} int32 samples of shape [3, 5], sample i's values starting at i * 15. */
  static Path writeSamples(Path samples, int count) throws IOException {
    for (int i = 0; i < count; i++) {
      ByteBuffer data = ByteBuffer.allocate(15 * 4).order(ByteOrder.LITTLE_ENDIAN);
      for (int k = 0; k < 15; k++) {
        data.putInt(i * 15 + k);
      }
      writeNpy(samples.resolve(String.format("s%03d.npy", i)), "<i4", false, new long[] {3, 5}, data.array());
    }
    return samples;
  }

  static long count(Map<String, AtomicLong> counts, Path file) {
    AtomicLong n = counts.get(file.toAbsolutePath().toString());
    return n == null ? 0 : n.get();
  }

  static Map<Path, Long> snapshot(Map<String, AtomicLong> counts, List<Path> files) {
    Map<Path, Long> out = new HashMap<>();
    for (Path f : files) {
      out.put(f, count(counts, f));
    }
    return out;
  }

  static List<Path> files(Path d) throws IOException {
    try (Stream<Path> s = Files.list(d)) {
      return s.filter(p -> p.toString().endsWith(".npy")).sorted().toList();
    }
  }

  static List<Path> copies(Path cacheDir) throws IOException {
    try (Stream<Path> s = Files.list(cacheDir)) {
      return s.filter(p -> !p.getFileName().toString().endsWith(".lock")).sorted().toList();
    }
  }

  @Test
  void aSampleDirectoryOpensOnlyItsFirstFileOnOpenAndEachFileOncePerEpoch() throws IOException {
    Path samples = writeSamples(dir.resolve("samples"), 12);
    List<Path> files = files(samples);
    try (DirectoryDataset l = Directory.open(samples);
        DirectoryDataset r = Directory.open(CountedFileSystem.uri(samples))) {
      assertEquals(l.schema(), r.schema());
      assertEquals(1, count(CountedFileSystem.OPENS, files.get(0)), "the schema comes from the first file");
      for (Path f : files.subList(1, files.size())) {
        assertEquals(0, count(CountedFileSystem.OPENS, f), f + " is not opened until it is read");
      }
      for (int epoch = 1; epoch <= 2; epoch++) {
        Map<Path, Long> before = snapshot(CountedFileSystem.OPENS, files);
        Map<Path, Long> bytesBefore = snapshot(CountedFileSystem.BYTES, files);
        assertEquals(Checksums.sha256(l), Checksums.sha256(r));
        for (Path f : files) {
          assertEquals(before.get(f) + 1, count(CountedFileSystem.OPENS, f), f + ": one open per sample per epoch");
          long read = count(CountedFileSystem.BYTES, f) - bytesBefore.get(f);
          // the header's first 12 bytes, the rest of the header, then the data: each byte read once, but for
          // the two bytes of the 12 that a version 1.0 header's text starts with
          assertThat(read).as(f + ": bytes read for one sample").isBetween(Files.size(f), Files.size(f) + 2);
        }
      }
    }
  }

  @Test
  void aRemoteWholeArrayReadReadsItsDataOnceAndEqualsTheLocalReadInAnyOrder() throws IOException {
    Random random = new Random(5);
    long[][] shapes = {{}, {7}, {3, 4}, {2, 3, 4}, {0, 3}};
    String[] descrs = {">i4", "<f8", ">f8", "|u1", "<i2"};
    int n = 0;
    for (long[] shape : shapes) {
      for (String descr : descrs) {
        for (boolean fortran : new boolean[] {false, true}) {
          long items = 1;
          for (long d : shape) {
            items *= d;
          }
          int width = Integer.parseInt(descr.substring(2));
          byte[] data = new byte[(int) items * width];
          random.nextBytes(data);
          Path f = writeNpy(dir.resolve("arrays/a" + n++ + ".npy"), descr, fortran, shape, data);
          Tensor local = Npy.readArray(f, "x");
          Tensor remote = Npy.readArray(CountedFileSystem.uri(f), "x");
          // the header's 12-byte prefix, the rest of the header, then the data once: not again through a block
          assertThat(count(CountedFileSystem.BYTES, f)).as(f + ": bytes read").isLessThan(Files.size(f) + 12);
          assertEquals(local.dtype(), remote.dtype(), f.toString());
          assertEquals(local.shape(), remote.shape(), f.toString());
          assertEquals(local.data(), remote.data(), f + " " + descr + (fortran ? " fortran" : ""));
        }
      }
    }
  }

  @Test
  void aRemoteSampleOfAnotherShapeThanTheFirstIsANamedError() throws IOException {
    Path samples = writeSamples(dir.resolve("mixed"), 2);
    writeNpy(samples.resolve("s002.npy"), "<i4", false, new long[] {4, 5}, new byte[4 * 5 * 4]);
    try (DirectoryDataset r = Directory.open(CountedFileSystem.uri(samples))) {
      assertThatThrownBy(() -> r.get(2)).isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining("s002.npy").hasMessageContaining("s000.npy").hasMessageContaining("[4, 5]");
    }
  }

  @Test
  void aSampleDirectoryThroughTheCacheReadsNoRemoteDataOnItsSecondPass() throws IOException {
    Path samples = writeSamples(dir.resolve("cached-samples"), 10);
    List<Path> files = files(samples);
    Path cacheDir = dir.resolve("cache");
    RemoteCache cache = RemoteCache.at(cacheDir, 64L << 20);
    for (int pass = 0; pass < 2; pass++) {
      Map<Path, Long> opens = snapshot(CountedFileSystem.OPENS, files);
      Map<Path, Long> bytes = snapshot(CountedFileSystem.BYTES, files);
      try (DirectoryDataset l = Directory.open(samples);
          DirectoryDataset r = (DirectoryDataset) Formats.openRemote(CountedFileSystem.uri(samples), "directory",
              List.of(), cache)) {
        assertEquals(l.schema(), r.schema());
        assertEquals(Checksums.sha256(l), Checksums.sha256(r));
      }
      for (Path f : files) {
        long read = count(CountedFileSystem.BYTES, f) - bytes.get(f);
        assertEquals(pass == 0 ? Files.size(f) : 0, read, f + ": remote bytes read in pass " + pass);
        long opened = count(CountedFileSystem.OPENS, f) - opens.get(f);
        assertThat(opened).as(f + ": opens in pass " + pass).isLessThanOrEqualTo(f.equals(files.get(0)) ? 2 : 1);
      }
    }
    assertThat(copies(cacheDir)).hasSize(files.size()).noneMatch(p -> p.toString().endsWith(".part"));
    for (Path f : files) {
      assertEquals(1, count(CountedFileSystem.FULL_READS, f), f + " downloaded once in two passes");
    }
  }

  @Test
  void anNpyStackThroughTheCacheIsDownloadedOnceAndReadsOnlyHeadersOnItsSecondOpen() throws IOException {
    Path stack = dir.resolve("stack");
    Random random = new Random(3);
    for (int k = 0; k < 3; k++) {
      byte[] data = new byte[(40 + k) * 6 * 8];
      random.nextBytes(data);
      writeNpy(stack.resolve(k + ".npy"), "<f8", false, new long[] {40 + k, 6}, data);
    }
    List<Path> chunks = files(stack);
    Path cacheDir = dir.resolve("stack-cache");
    RemoteCache cache = RemoteCache.at(cacheDir, 64L << 20);
    for (int pass = 0; pass < 2; pass++) {
      Map<Path, Long> bytes = snapshot(CountedFileSystem.BYTES, chunks);
      try (NpyDataset l = Npy.open(stack); NpyStack r = Npy.openStack(CountedFileSystem.uri(stack), cache)) {
        assertEquals(l.schema(), r.schema());
        assertEquals(Checksums.sha256(l), Checksums.sha256(r));
      }
      if (pass == 1) {
        for (Path f : chunks) {
          long read = count(CountedFileSystem.BYTES, f) - bytes.get(f);
          long header = Files.size(f) - (40 + Integer.parseInt(f.getFileName().toString().substring(0, 1))) * 6 * 8;
          // the header, its 12-byte prefix read first: no data byte
          assertThat(read).as(f + ": remote bytes read on the second open").isLessThanOrEqualTo(header + 12);
        }
      }
    }
    for (Path f : chunks) {
      assertEquals(1, count(CountedFileSystem.FULL_READS, f), f + " downloaded once in two passes");
    }
    assertThat(copies(cacheDir)).hasSize(chunks.size());
  }

  @Test
  void anNpyFileAndAnAlignedDirectoryThroughTheCacheAreDownloadedOnce() throws IOException {
    Path aligned = dir.resolve("aligned");
    Random random = new Random(9);
    for (String name : new String[] {"x", "y"}) {
      byte[] data = new byte[50 * 3 * 4];
      random.nextBytes(data);
      writeNpy(aligned.resolve(name + ".npy"), "<f4", false, new long[] {50, 3}, data);
    }
    Path single = Files.createDirectories(dir.resolve("single")).resolve("z.npy");
    Files.copy(aligned.resolve("x.npy"), single);
    RemoteCache cache = RemoteCache.at(dir.resolve("npy-cache"), 64L << 20);
    for (int pass = 0; pass < 2; pass++) {
      try (NpyDataset l = Npy.open(aligned); NpyDataset r = Npy.open(CountedFileSystem.uri(aligned), cache);
          NpyDataset lx = Npy.open(single);
          NpyDataset rx = (NpyDataset) Formats.openRemote(CountedFileSystem.uri(single), "npy", List.of(), cache)) {
        assertEquals(l.schema(), r.schema());
        assertEquals(Checksums.sha256(l), Checksums.sha256(r));
        assertEquals(lx.schema(), rx.schema());
        assertEquals(Checksums.sha256(lx), Checksums.sha256(rx));
      }
    }
    for (Path f : List.of(aligned.resolve("x.npy"), aligned.resolve("y.npy"), single)) {
      assertEquals(1, count(CountedFileSystem.FULL_READS, f), f + " downloaded once in two passes");
    }
  }
}
