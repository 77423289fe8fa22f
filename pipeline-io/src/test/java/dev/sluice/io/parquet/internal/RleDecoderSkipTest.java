package dev.sluice.io.parquet.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.apache.parquet.bytes.HeapByteBufferAllocator;
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridEncoder;
import org.junit.jupiter.api.Test;

/** Skipping values of RLE / bit-packed hybrid data leaves the decoder where reading them would. */
class RleDecoderSkipTest {
  @Test
  void skipsThenReadsTheValuesAReadOfAllDelivers() throws Exception {
    Random rnd = new Random(17);
    for (int width : new int[] {1, 2, 3, 7, 8, 13, 20}) {
      for (int trial = 0; trial < 20; trial++) {
        int n = 1 + rnd.nextInt(3000);
        int[] values = new int[n];
        for (int i = 0; i < n; ) { // runs of one value and stretches of random ones
          int len = 1 + rnd.nextInt(40);
          boolean run = rnd.nextBoolean();
          int v = rnd.nextInt(1 << width);
          for (int k = 0; k < len && i < n; k++, i++) {
            values[i] = run ? v : rnd.nextInt(1 << width);
          }
        }
        RunLengthBitPackingHybridEncoder enc = new RunLengthBitPackingHybridEncoder(width, 64, 1 << 16,
            new HeapByteBufferAllocator());
        for (int v : values) {
          enc.writeInt(v);
        }
        ByteBuffer encoded = enc.toBytes().toByteBuffer();
        ByteBuffer bytes = ByteBuffer.allocate(encoded.remaining()).put(encoded).flip();
        RleDecoder d = new RleDecoder(bytes, 0, bytes.limit(), width);
        int[] got = new int[n];
        int at = 0;
        while (at < n) {
          int skip = Math.min(n - at, rnd.nextInt(100));
          d.skip(skip);
          at += skip;
          int read = Math.min(n - at, rnd.nextInt(30));
          d.read(got, at, read);
          assertArrayEquals(Arrays.copyOfRange(values, at, at + read), Arrays.copyOfRange(got, at, at + read),
              "width " + width + ", values from " + at);
          at += read;
        }
      }
    }
  }
}
