package dev.sluice.core.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class OffsetGatherTest {

  /** A buffer of {@code bytes} random bytes: direct or on the heap, little- or big-endian. */
  private static ByteBuffer buffer(int bytes, boolean direct, ByteOrder order, Random random) {
    ByteBuffer b = (direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes)).order(order);
    for (int i = 0; i < bytes; i++) {
      b.put(i, (byte) random.nextInt());
    }
    return b;
  }

  private static byte[] bytes(ByteBuffer b, int from, int length) {
    byte[] out = new byte[length];
    b.get(from, out);
    return out;
  }

  @ParameterizedTest
  @CsvSource({
      "4, true, true", "8, true, true", "3, true, true", "100, true, true", "300, true, true",
      "4, false, true", "8, false, false", "12, false, true", "8, true, false", "4, true, false"})
  void copiesEachRowsBytesFromItsOffsetToConsecutiveRows(int rowBytes, boolean srcDirect, boolean dstDirect) {
    Random random = new Random(42 + rowBytes);
    ByteBuffer src = buffer(64 * 1024, srcDirect, ByteOrder.LITTLE_ENDIAN, random);
    ByteBuffer dst = buffer(40 * rowBytes, dstDirect, ByteOrder.LITTLE_ENDIAN, random);
    int[] offsets = new int[30];
    for (int i = 0; i < offsets.length; i++) {
      offsets[i] = random.nextInt(src.limit() - rowBytes + 1); // unaligned on purpose
    }
    byte[] before = bytes(dst, 0, dst.limit());
    OffsetGather.copy(src, rowBytes, offsets, 5, 20, dst, 7);
    for (int i = 0; i < 20; i++) {
      assertArrayEquals(bytes(src, offsets[5 + i], rowBytes), bytes(dst, (7 + i) * rowBytes, rowBytes), "row " + i);
    }
    assertArrayEquals(java.util.Arrays.copyOf(before, 7 * rowBytes), bytes(dst, 0, 7 * rowBytes), "rows before at");
    assertArrayEquals(java.util.Arrays.copyOfRange(before, 27 * rowBytes, dst.limit()),
        bytes(dst, 27 * rowBytes, dst.limit() - 27 * rowBytes), "rows after the copy");
    assertEquals(0, src.position());
    assertEquals(0, dst.position());
  }

  @ParameterizedTest
  @CsvSource({"4", "8"})
  void copiesBytesAsTheyAreWhateverTheByteOrders(int rowBytes) {
    Random random = new Random(7);
    ByteBuffer src = buffer(256, true, ByteOrder.BIG_ENDIAN, random);
    ByteBuffer dst = buffer(4 * rowBytes, false, ByteOrder.LITTLE_ENDIAN, random);
    int[] offsets = {0, 9, 100, 256 - rowBytes};
    OffsetGather.copy(src, rowBytes, offsets, 0, 4, dst, 0);
    for (int i = 0; i < 4; i++) {
      assertArrayEquals(bytes(src, offsets[i], rowBytes), bytes(dst, i * rowBytes, rowBytes));
    }
  }

  @ParameterizedTest
  @CsvSource({"true", "false"})
  void refusesAnOffsetOutsideTheSourceBeforeCopyingAnything(boolean direct) {
    Random random = new Random(3);
    ByteBuffer src = buffer(64, direct, ByteOrder.LITTLE_ENDIAN, random);
    ByteBuffer dst = buffer(32, direct, ByteOrder.LITTLE_ENDIAN, random);
    byte[] before = bytes(dst, 0, 32);
    assertThrows(IndexOutOfBoundsException.class, () -> OffsetGather.copy(src, 8, new int[] {0, 57}, 0, 2, dst, 0));
    assertThrows(IndexOutOfBoundsException.class, () -> OffsetGather.copy(src, 8, new int[] {0, -1}, 0, 2, dst, 0));
    assertThrows(IndexOutOfBoundsException.class, () -> OffsetGather.copy(src, 8, new int[] {0, 8}, 0, 2, dst, 3));
    assertThrows(IndexOutOfBoundsException.class, () -> OffsetGather.copy(src, 8, new int[] {0, 8}, 1, 2, dst, 0));
    assertThrows(IllegalArgumentException.class, () -> OffsetGather.copy(src, -1, new int[] {0}, 0, 1, dst, 0));
    assertArrayEquals(before, bytes(dst, 0, 32));
  }
}
