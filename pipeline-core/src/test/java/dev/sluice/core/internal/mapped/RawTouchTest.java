package dev.sluice.core.internal.mapped;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class RawTouchTest {
  private static ByteBuffer filled(ByteBuffer b, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    for (int i = 0; i < b.capacity(); i++) {
      b.put(i, (byte) random.nextInt(256));
    }
    return b;
  }

  @Test
  void byAddressSumsOneByteOfEachLine() {
    ByteBuffer b = filled(ByteBuffer.allocateDirect(1024), 7);
    // the build starts tests with address access allowed on every JDK
    assertTrue(RawTouch.raw(b));
    for (int lines = 1; lines <= 4; lines++) {
      for (int pos : new int[] {0, 1, 100, 1024 - 1 - (lines - 1) * 64}) {
        int expected = 0;
        for (int k = 0; k < lines; k++) {
          expected += b.get(pos + 64 * k);
        }
        assertEquals(expected, RawTouch.byAddress(b, pos, lines), "pos " + pos + ", lines " + lines);
      }
    }
  }

  @Test
  void byAddressLeavesLinesOutsideTheBufferAlone() {
    ByteBuffer b = filled(ByteBuffer.allocateDirect(256), 3);
    assertTrue(RawTouch.raw(b));
    assertEquals(0, RawTouch.byAddress(b, -1, 1));
    assertEquals(0, RawTouch.byAddress(b, 256, 1));
    assertEquals(0, RawTouch.byAddress(b, 255 - 191, 4)); // its fourth line would start at byte 256
    assertEquals(0, RawTouch.byAddress(b, Integer.MAX_VALUE - 10, 4));
  }

  @Test
  void byHandleWarmsEveryBuffer() {
    for (ByteBuffer b : new ByteBuffer[] {
        filled(ByteBuffer.allocate(300), 1),
        filled(ByteBuffer.allocateDirect(300), 2).order(ByteOrder.LITTLE_ENDIAN),
        filled(ByteBuffer.allocateDirect(300), 2).asReadOnlyBuffer()}) {
      ByteBuffer native_ = b.duplicate().order(ByteOrder.nativeOrder());
      int expected = native_.getShort(0) + native_.getShort(64) + native_.getShort(128) + native_.getShort(192);
      assertEquals(expected, RawTouch.byHandle(b, 0, 4));
      // the last row's load is moved back inside the buffer
      assertEquals(native_.getShort(298), RawTouch.byHandle(b, 299, 1));
    }
    assertEquals(0, RawTouch.byHandle(ByteBuffer.allocateDirect(1), 0, 1));
  }
}
