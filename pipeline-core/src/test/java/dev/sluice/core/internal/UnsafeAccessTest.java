package dev.sluice.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link UnsafeAccess}: address access only where the JVM allows it silently, and unmapping. */
class UnsafeAccessTest {

  @Test
  void addressAccessIsOfferedExactlyWhenTheJvmAllowsItAndReadsTheBuffersBytes() {
    String mode = System.getProperty("sun.misc.unsafe.memory.access");
    boolean allowed = mode != null ? mode.equals("allow") : Runtime.version().feature() < 24;
    assertThat(UnsafeAccess.UNSAFE != null).isEqualTo(allowed);
    if (UnsafeAccess.UNSAFE == null) {
      assertThat(UnsafeAccess.BUFFER_ADDRESS).isEqualTo(-1);
      return;
    }
    ByteBuffer b = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
    b.putLong(8, 0x0123_4567_89ab_cdefL);
    long address = UnsafeAccess.UNSAFE.getLong(b, UnsafeAccess.BUFFER_ADDRESS);
    assertThat(UnsafeAccess.UNSAFE.getLong(address + 8)).isEqualTo(0x0123_4567_89ab_cdefL);
  }

  @Test
  void aMappingIsUnmappedAfterItsBytesWereRead(@TempDir Path dir) throws IOException {
    Path f = dir.resolve("bytes");
    Files.write(f, new byte[] {1, 2, 3, 4});
    assertThat(UnsafeAccess.canUnmap()).isTrue();
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
      MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_ONLY, 0, 4);
      byte[] read = new byte[4];
      m.get(read);
      assertThat(read).containsExactly(1, 2, 3, 4);
      UnsafeAccess.unmap(m);
    }
    Files.delete(f); // an unmapped file can be deleted on every platform
  }
}
