package dev.sluice.io.parquet;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.CodecFactory;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;

/**
 * Page compressors for writing test files: parquet-java's own (through Hadoop's codecs, LZ4 with
 * Hadoop's block framing), plus Brotli, for which no Java encoder exists on Maven Central: its
 * pages are valid Brotli streams made of uncompressed meta-blocks (RFC 7932 §9.2), which every
 * Brotli decoder reads. {@code rawLz4} writes LZ4 pages as one raw LZ4 block instead of Hadoop's
 * framing, as some non-Hadoop writers did under the same codec name.
 */
final class TestCodecs implements CompressionCodecFactory {
  private final CodecFactory parquet = new CodecFactory(new PlainParquetConfiguration(), 64 * 1024);
  private final boolean rawLz4;

  TestCodecs(boolean rawLz4) {
    this.rawLz4 = rawLz4;
  }

  @Override
  public BytesInputCompressor getCompressor(CompressionCodecName codec) {
    if (codec == CompressionCodecName.BROTLI) {
      return compressor(codec, TestCodecs::brotliStored);
    }
    if (codec == CompressionCodecName.LZ4 && rawLz4) {
      return compressor(codec, in -> {
        io.airlift.compress.lz4.Lz4Compressor lz4 = new io.airlift.compress.lz4.Lz4Compressor();
        byte[] out = new byte[lz4.maxCompressedLength(in.length)];
        return java.util.Arrays.copyOf(out, lz4.compress(in, 0, in.length, out, 0, out.length));
      });
    }
    return parquet.getCompressor(codec);
  }

  @Override
  public BytesInputDecompressor getDecompressor(CompressionCodecName codec) {
    if (codec == CompressionCodecName.BROTLI) {
      return new dev.sluice.io.parquet.internal.PageCodecs().getDecompressor(codec); // parquet-java has none
    }
    return parquet.getDecompressor(codec);
  }

  @Override
  public void release() {
    parquet.release();
  }

  private interface Compress {
    byte[] apply(byte[] in) throws IOException;
  }

  private static BytesInputCompressor compressor(CompressionCodecName codec, Compress c) {
    return new BytesInputCompressor() {
      @Override
      public BytesInput compress(BytesInput bytes) throws IOException {
        return BytesInput.from(c.apply(bytes.toByteArray()));
      }

      @Override
      public CompressionCodecName getCodecName() {
        return codec;
      }

      @Override
      public void release() {
        // nothing held
      }
    };
  }

  /** A Brotli stream of uncompressed meta-blocks of at most 64 KiB, then the last, empty, meta-block. */
  static byte[] brotliStored(byte[] in) {
    Bits b = new Bits();
    b.write(0, 1); // WBITS = 16
    for (int off = 0; off < in.length; off += 65536) {
      int n = Math.min(65536, in.length - off);
      b.write(0, 1); // ISLAST = 0
      b.write(0, 2); // MNIBBLES = 4
      b.write(n - 1, 16); // MLEN - 1
      b.write(1, 1); // ISUNCOMPRESSED
      b.align();
      b.bytes(in, off, n);
    }
    b.write(1, 1); // ISLAST
    b.write(1, 1); // ISLASTEMPTY
    b.align();
    return b.out.toByteArray();
  }

  /** Bits, least significant first, into bytes. */
  private static final class Bits {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    int acc;
    int n;

    void write(int value, int bits) {
      for (int i = 0; i < bits; i++) {
        acc |= ((value >>> i) & 1) << n;
        if (++n == 8) {
          out.write(acc);
          acc = 0;
          n = 0;
        }
      }
    }

    void align() {
      if (n > 0) {
        out.write(acc);
        acc = 0;
        n = 0;
      }
    }

    void bytes(byte[] b, int off, int len) {
      out.write(b, off, len);
    }
  }
}
