package dev.sluice.io.parquet.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.CodecFactory;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.xerial.snappy.Snappy;

/**
 * The decompressors parquet-java uses for Sluice's reads: snappy pages (the common case) are
 * decompressed array to array in one call, skipping the Hadoop stream and codec-pool layers; every
 * other codec is parquet-java's own {@link CodecFactory}.
 */
final class PageCodecs implements CompressionCodecFactory {
  private final CodecFactory fallback = new CodecFactory(new PlainParquetConfiguration(), 0);
  private final BytesInputDecompressor snappy = new SnappyPages();

  @Override
  public BytesInputCompressor getCompressor(CompressionCodecName codec) {
    return fallback.getCompressor(codec);
  }

  @Override
  public BytesInputDecompressor getDecompressor(CompressionCodecName codec) {
    return codec == CompressionCodecName.SNAPPY ? snappy : fallback.getDecompressor(codec);
  }

  @Override
  public void release() {
    fallback.release();
  }

  /** Raw snappy blocks, heap to heap. */
  private final class SnappyPages implements BytesInputDecompressor {
    @Override
    public BytesInput decompress(BytesInput bytes, int uncompressedSize) throws IOException {
      ByteBuffer in = bytes.toByteBuffer();
      byte[] src;
      int off;
      int len = in.remaining();
      if (in.hasArray()) {
        src = in.array();
        off = in.arrayOffset() + in.position();
      } else {
        src = new byte[len];
        in.duplicate().get(src);
        off = 0;
      }
      byte[] out = new byte[uncompressedSize];
      int n = Snappy.uncompress(src, off, len, out, 0);
      if (n != uncompressedSize) {
        throw new IOException("snappy page decompressed to " + n + " bytes but its header says " + uncompressedSize);
      }
      return BytesInput.from(out);
    }

    @Override
    public void decompress(ByteBuffer input, int compressedSize, ByteBuffer output, int uncompressedSize)
        throws IOException {
      fallback.getDecompressor(CompressionCodecName.SNAPPY).decompress(input, compressedSize, output, uncompressedSize);
    }

    @Override
    public void release() {
      // nothing pooled
    }
  }
}
