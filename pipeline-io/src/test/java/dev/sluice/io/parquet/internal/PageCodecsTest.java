package dev.sluice.io.parquet.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory.BytesInputDecompressor;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class PageCodecsTest {
  private static byte[] page(int size, long seed) {
    Random rnd = new Random(seed);
    byte[] b = new byte[size];
    for (int i = 0; i < size; i++) {
      b[i] = (byte) (rnd.nextInt(7) + 'a'); // compressible
    }
    return b;
  }

  private static byte[] compress(CompressionCodecName codec, byte[] raw) throws IOException {
    return new PageCodecs().getCompressor(codec).compress(BytesInput.from(raw)).toByteArray();
  }

  private static ByteBuffer bytes(BytesInput in) throws IOException {
    return in.toByteBuffer();
  }

  private static byte[] array(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  @ParameterizedTest
  @EnumSource(value = CompressionCodecName.class, names = {"UNCOMPRESSED", "SNAPPY", "GZIP", "ZSTD", "LZ4_RAW"})
  void aRecyclingDecompressorReusesItsArrayAndReturnsEachPageExactly(CompressionCodecName codec) throws IOException {
    BytesInputDecompressor d = PageCodecs.recycling().getDecompressor(codec);
    byte[] big = page(5000, 1);
    byte[] small = page(1200, 2);
    byte[] bigger = page(9000, 3);
    ByteBuffer first = bytes(d.decompress(BytesInput.from(compress(codec, big)), big.length));
    assertArrayEquals(big, array(first));
    ByteBuffer second = bytes(d.decompress(BytesInput.from(compress(codec, small)), small.length));
    assertArrayEquals(small, array(second));
    assertSame(first.array(), second.array(), "a smaller page goes into the array of the page before");
    ByteBuffer third = bytes(d.decompress(BytesInput.from(compress(codec, bigger)), bigger.length));
    assertArrayEquals(bigger, array(third));
  }

  @ParameterizedTest
  @EnumSource(value = CompressionCodecName.class, names = {"SNAPPY", "ZSTD", "LZ4_RAW"})
  void aPageLongerThanItsHeaderSaysFailsInARecycledArray(CompressionCodecName codec) throws IOException {
    BytesInputDecompressor d = PageCodecs.recycling().getDecompressor(codec);
    byte[] big = page(5000, 1);
    byte[] small = page(1200, 2);
    d.decompress(BytesInput.from(compress(codec, big)), big.length);
    byte[] packed = compress(codec, small);
    assertThrows(IOException.class, () -> d.decompress(BytesInput.from(packed), small.length - 1));
  }

  @ParameterizedTest
  @EnumSource(value = CompressionCodecName.class, names = {"SNAPPY", "ZSTD"})
  void eachRecyclingDecompressorHasItsOwnArraysAndThePlainFactoryNone(CompressionCodecName codec)
      throws IOException {
    PageCodecs recycling = PageCodecs.recycling();
    BytesInputDecompressor a = recycling.getDecompressor(codec);
    BytesInputDecompressor b = recycling.getDecompressor(codec);
    assertNotSame(a, b);
    byte[] x = page(3000, 4);
    byte[] y = page(3000, 5);
    ByteBuffer ax = bytes(a.decompress(BytesInput.from(compress(codec, x)), x.length));
    ByteBuffer by = bytes(b.decompress(BytesInput.from(compress(codec, y)), y.length));
    assertArrayEquals(x, array(ax), "another chunk's decompressor leaves this one's page alone");
    assertArrayEquals(y, array(by));

    BytesInputDecompressor plain = new PageCodecs().getDecompressor(codec);
    ByteBuffer p1 = bytes(plain.decompress(BytesInput.from(compress(codec, x)), x.length));
    ByteBuffer p2 = bytes(plain.decompress(BytesInput.from(compress(codec, y)), y.length));
    assertNotSame(p1.array(), p2.array());
    assertArrayEquals(x, array(p1), "the plain factory's pages stay valid");
  }
}
