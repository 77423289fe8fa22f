package dev.sluice.io.hdf5.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** HDF5's shuffle filter undone: every element width, lengths with and without bytes after the last whole element. */
class ChunkDecoderTest {

  /** HDF5's shuffle: byte {@code j} of every element stored together, the bytes after the last whole element as they are. */
  private static byte[] shuffle(byte[] plain, int size) {
    int n = plain.length / size;
    byte[] out = new byte[plain.length];
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < size; j++) {
        out[j * n + i] = plain[i * size + j];
      }
    }
    System.arraycopy(plain, n * size, out, n * size, plain.length - n * size);
    return out;
  }

  @Test
  void unshuffleRestoresTheBytesForEveryWidthAndLength() {
    SplittableRandom random = new SplittableRandom(42);
    for (int size = 1; size <= 9; size++) {
      for (int length : new int[] {0, 1, size, 7 * size, 8 * size, 64 * size + 3, 1000 * size + size - 1, 4099}) {
        byte[] plain = new byte[length];
        for (int k = 0; k < length; k++) {
          plain[k] = (byte) random.nextInt(256);
        }
        for (boolean direct : new boolean[] {false, true}) {
          ByteBuffer in = direct ? ByteBuffer.allocateDirect(length + 5) : ByteBuffer.allocate(length + 5);
          in.position(5);
          in.put(shuffle(plain, size));
          in.position(5);
          ByteBuffer out = direct ? ByteBuffer.allocateDirect(length) : ByteBuffer.allocate(length);
          ChunkDecoder.unshuffle(in, out, size);
          byte[] got = new byte[length];
          out.get(0, got);
          assertEquals(ByteBuffer.wrap(plain), ByteBuffer.wrap(got), "element size " + size + ", " + length + " bytes");
        }
      }
    }
  }
}
