package dev.sluice.core.internal.mapped;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The two ways to read a local file give the same bytes, and the same typed errors. */
class FileInputTest {
  @TempDir
  Path dir;

  private Path file(int bytes, long seed) throws IOException {
    byte[] data = new byte[bytes];
    new Random(seed).nextBytes(data);
    Path f = dir.resolve("data-" + seed + ".bin");
    Files.write(f, data);
    return f;
  }

  @Test
  void mappedAndPositionedReadsGiveEqualBytes() throws IOException {
    Path f = file(10_000, 7);
    byte[] expected = Files.readAllBytes(f);
    Random r = new Random(11);
    // chunks of 97 bytes: most ranges cross a chunk boundary
    try (FileInput mapped = MappedFile.open(f, 97); FileInput pread = PositionedReadFile.open(f)) {
      assertThat(mapped.size()).isEqualTo(expected.length);
      assertThat(pread.size()).isEqualTo(expected.length);
      for (int i = 0; i < 200; i++) {
        int offset = r.nextInt(expected.length);
        int length = r.nextInt(expected.length - offset + 1);
        ByteBuffer a = ByteBuffer.allocate(length);
        ByteBuffer b = ByteBuffer.allocateDirect(length);
        mapped.readFully(offset, a);
        pread.readFully(offset, b);
        assertThat(a.hasRemaining()).isFalse();
        assertThat(b.hasRemaining()).isFalse();
        assertThat(a.flip()).isEqualTo(ByteBuffer.wrap(expected, offset, length));
        assertThat(b.flip()).isEqualTo(ByteBuffer.wrap(expected, offset, length));
        assertThat(mapped.region(offset, length, "range")).isEqualTo(pread.region(offset, length, "range"));
      }
    }
  }

  @Test
  void aRangePastTheEndNamesTheFileTheRangeAndTheSize() throws IOException {
    Path f = file(100, 3);
    try (FileInput mapped = MappedFile.open(f, 1 << 20); FileInput pread = PositionedReadFile.open(f)) {
      for (FileInput in : new FileInput[] {mapped, pread}) {
        assertThatThrownBy(() -> in.readFully(90, ByteBuffer.allocate(20)))
            .isInstanceOf(DatasetFormatException.class)
            .hasMessageContaining(f.toString()).hasMessageContaining("[90, 110)").hasMessageContaining("100 bytes");
        assertThatThrownBy(() -> in.region(-1, 5, "footer"))
            .isInstanceOf(DatasetFormatException.class).hasMessageContaining("footer");
      }
    }
  }

  @Test
  void aFileThatShrinksUnderAReadIsATypedError() throws IOException {
    Path f = file(64 * 1024, 5);
    try (FileInput mapped = MappedFile.open(f, 1 << 20); FileInput pread = PositionedReadFile.open(f)) {
      mapped.region(0, 16, "head"); // mapped before the file shrinks
      try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
        raf.setLength(100);
      }
      assertThatThrownBy(() -> pread.readFully(0, ByteBuffer.allocate(50_000)))
          .isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining(f.toString()).hasMessageContaining("truncated").hasMessageContaining("expected 50000")
          .hasMessageContaining("found 100");
      assertThatThrownBy(() -> mapped.readFully(8192, ByteBuffer.allocate(40_000)))
          .isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining(f.toString()).hasMessageContaining("changed while mapped");
    }
  }

  @Test
  void aReadAfterCloseSaysSo() throws IOException {
    Path f = file(100, 9);
    FileInput pread = PositionedReadFile.open(f);
    FileInput mapped = MappedFile.open(f, 1 << 20);
    pread.close();
    pread.close();
    mapped.close();
    mapped.close();
    assertThatThrownBy(() -> pread.readFully(0, ByteBuffer.allocate(4))).isInstanceOf(DatasetClosedException.class)
        .hasMessageContaining(f.toString());
    assertThatThrownBy(() -> mapped.readFully(0, ByteBuffer.allocate(4))).isInstanceOf(DatasetClosedException.class)
        .hasMessageContaining(f.toString());
  }
}
