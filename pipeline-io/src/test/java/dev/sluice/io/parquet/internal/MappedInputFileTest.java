package dev.sluice.io.parquet.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.apache.parquet.io.SeekableInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Parquet's mapped input reads the file's bytes, and a file truncated under it fails the read with an IOException. */
class MappedInputFileTest {
  @TempDir
  Path dir;

  @Test
  void readsTheFileAndReportsATruncationAsAnIoException() throws IOException {
    byte[] data = new byte[256 * 1024];
    new Random(17).nextBytes(data);
    Path f = dir.resolve("x.parquet");
    Files.write(f, data);
    MappedInputFile in = new MappedInputFile(f);
    assertThat(in.getLength()).isEqualTo(data.length);
    try (SeekableInputStream s = in.newStream()) {
      s.seek(1000);
      byte[] got = new byte[5000];
      s.readFully(got);
      assertThat(got).isEqualTo(Arrays.copyOfRange(data, 1000, 6000));
      ByteBuffer direct = ByteBuffer.allocateDirect(300);
      s.readFully(direct);
      assertThat(direct.flip()).isEqualTo(ByteBuffer.wrap(data, 6000, 300));
      assertThat(s.getPos()).isEqualTo(6300);
      try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
        raf.setLength(4096);
      }
      s.seek(8192);
      assertThatThrownBy(() -> s.readFully(new byte[100_000])).isInstanceOf(IOException.class)
          .hasMessageContaining(f.toString()).hasMessageContaining("changed while mapped");
    }
  }

  @Test
  void aMissingFileIsNoSuchFileException() {
    MappedInputFile in = new MappedInputFile(dir.resolve("missing.parquet"));
    assertThatThrownBy(in::getLength).isInstanceOf(NoSuchFileException.class);
    assertThatThrownBy(in::newStream).isInstanceOf(NoSuchFileException.class);
  }
}
