package dev.sluice.io.parquet.internal;

import com.github.luben.zstd.Zstd;
import io.airlift.compress.MalformedInputException;
import io.airlift.compress.lz4.Lz4Decompressor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.EnumMap;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.xerial.snappy.Snappy;

/**
 * The page codecs of Sluice's Parquet reads and writes, none of which needs Hadoop. Decompressors: snappy (snappy-java), gzip
 * (the JDK), zstd (zstd-jni), LZ4_RAW and the deprecated Hadoop-framed LZ4 (aircompressor, pure
 * Java) and Brotli (Google's pure-Java decoder, optional: {@link BrotliPages}), each decompressing a page array to array in one
 * call. LZO is not here: its only Java decoder is GPL-licensed hadoop-lzo. Compressors: the
 * {@link #WRITE_CODECS} the writer offers.
 *
 * <p>A {@link #recycling()} factory gives each {@link #getDecompressor} call its own decompressor,
 * which decompresses every page into the array it returned for the page before (grown when too
 * small): a page it returns is valid only until it decompresses the next one. Its users read a
 * column chunk's pages one at a time and copy what outlives a page (the dictionary page:
 * {@link PageDictionary}).
 */
public final class PageCodecs implements CompressionCodecFactory {
  /** The codecs this factory decompresses. */
  static final java.util.Set<CompressionCodecName> CODECS = java.util.EnumSet.of(CompressionCodecName.UNCOMPRESSED,
      CompressionCodecName.SNAPPY, CompressionCodecName.GZIP, CompressionCodecName.ZSTD,
      CompressionCodecName.LZ4_RAW, CompressionCodecName.LZ4, CompressionCodecName.BROTLI);

  private final Map<CompressionCodecName, Pages> decompressors = new EnumMap<>(CompressionCodecName.class);
  private final boolean recycling;

  /** A factory of Sluice's page codecs whose decompressors return a new array per page. */
  public PageCodecs() {
    this(false);
  }

  private PageCodecs(boolean recycling) {
    this.recycling = recycling;
    decompressors.put(CompressionCodecName.UNCOMPRESSED, new Pages("uncompressed", (in, off, len, out, outLen) -> {
      System.arraycopy(in, off, out, 0, Math.min(len, outLen));
      return len;
    }, false));
    decompressors.put(CompressionCodecName.SNAPPY, new Pages("snappy", PageCodecs::snappy, false));
    decompressors.put(CompressionCodecName.GZIP, new Pages("gzip", (in, off, len, out, outLen) ->
        readFully(new GZIPInputStream(new ByteArrayInputStream(in, off, len), 64 * 1024), out, outLen), false));
    decompressors.put(CompressionCodecName.ZSTD, new Pages("zstd", PageCodecs::zstd, false));
    decompressors.put(CompressionCodecName.LZ4_RAW, new Pages("LZ4_RAW", (in, off, len, out, outLen) ->
        len == 0 ? 0 : new Lz4Decompressor().decompress(in, off, len, out, 0, outLen), false));
    decompressors.put(CompressionCodecName.LZ4, new Pages("LZ4", PageCodecs::hadoopLz4, false));
    decompressors.put(CompressionCodecName.BROTLI, new Pages("brotli", (in, off, len, out, outLen) ->
        readFully(BrotliPages.stream(in, off, len), out, outLen), false));
  }

  /**
   * A factory whose decompressors (one per {@link #getDecompressor} call) decompress each page into
   * the array of the page before: a returned page is valid until the decompressor's next call.
   */
  static PageCodecs recycling() {
    return new PageCodecs(true);
  }

  /** The codecs {@link #getCompressor} writes with. */
  public static final java.util.Set<CompressionCodecName> WRITE_CODECS = java.util.EnumSet.of(
      CompressionCodecName.UNCOMPRESSED, CompressionCodecName.SNAPPY, CompressionCodecName.GZIP,
      CompressionCodecName.ZSTD, CompressionCodecName.LZ4_RAW);

  /** A page compressor for Sluice's writer: one of {@link #WRITE_CODECS}. */
  @Override
  public BytesInputCompressor getCompressor(CompressionCodecName codec) {
    Compress c = switch (codec) {
      case UNCOMPRESSED -> in -> in;
      case SNAPPY -> Snappy::compress;
      case GZIP -> in -> {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(in.length / 2 + 64);
        try (java.util.zip.GZIPOutputStream gz = new java.util.zip.GZIPOutputStream(out)) {
          gz.write(in);
        }
        return out.toByteArray();
      };
      case ZSTD -> in -> Zstd.compress(in, 3); // parquet-java's default level
      case LZ4_RAW -> in -> {
        io.airlift.compress.lz4.Lz4Compressor lz4 = new io.airlift.compress.lz4.Lz4Compressor();
        byte[] out = new byte[lz4.maxCompressedLength(in.length)];
        int n = lz4.compress(in, 0, in.length, out, 0, out.length);
        return java.util.Arrays.copyOf(out, n);
      };
      default -> throw new UnsupportedOperationException("Sluice writes Parquet pages with " + WRITE_CODECS
          + " but not " + codec);
    };
    return new BytesInputCompressor() {
      @Override
      public BytesInput compress(BytesInput bytes) throws IOException {
        return BytesInput.from(c.compress(bytes.toByteArray()));
      }

      @Override
      public CompressionCodecName getCodecName() {
        return codec;
      }

      @Override
      public void release() {
        // nothing pooled
      }
    };
  }

  /** Compresses one page. */
  @FunctionalInterface
  private interface Compress {
    byte[] compress(byte[] in) throws IOException;
  }

  @Override
  public BytesInputDecompressor getDecompressor(CompressionCodecName codec) {
    Pages d = decompressors.get(codec);
    if (d == null) {
      throw new UnsupportedOperationException("codec " + codec + " is not supported; Sluice decompresses " + CODECS);
    }
    return recycling ? new Pages(d.name, d.codec, true) : d;
  }

  @Override
  public void release() {
    // nothing pooled
  }

  /**
   * Decompresses {@code len} bytes of {@code in} from {@code off} into the first {@code outLen}
   * bytes of {@code out}; returns the bytes written.
   */
  @FunctionalInterface
  private interface Codec {
    int decompress(byte[] in, int off, int len, byte[] out, int outLen) throws IOException;
  }

  private static int readFully(InputStream in, byte[] out, int outLen) throws IOException {
    try (in) {
      int n = in.readNBytes(out, 0, outLen);
      if (in.read() >= 0) {
        throw new IOException("the page decompresses to more than the " + outLen + " bytes its header says");
      }
      return n;
    }
  }

  private static int snappy(byte[] in, int off, int len, byte[] out, int outLen) throws IOException {
    if (len == 0) {
      return 0;
    }
    return Snappy.uncompress(in, off, len, out, 0); // a longer page than outLen fails the caller's length check
  }

  private static int zstd(byte[] in, int off, int len, byte[] out, int outLen) throws IOException {
    if (len == 0) {
      return 0;
    }
    long n = Zstd.decompressByteArray(out, 0, outLen, in, off, len);
    if (Zstd.isError(n)) {
      throw new IOException("zstd: " + Zstd.getErrorName(n));
    }
    return (int) n;
  }

  /**
   * The deprecated {@code LZ4} codec: Hadoop's block framing (per block a 4-byte big-endian
   * decompressed size, then chunks of a 4-byte big-endian compressed size and an LZ4 block) as
   * older parquet-mr and Hadoop wrote it; a page that does not parse as that framing is read as one
   * raw LZ4 block, as some other writers produced under the same codec name (Arrow's readers do
   * the same).
   */
  private static int hadoopLz4(byte[] in, int off, int len, byte[] out, int outLen) throws IOException {
    if (len == 0) {
      return 0;
    }
    Lz4Decompressor lz4 = new Lz4Decompressor();
    int framed = -1;
    try {
      framed = hadoopFramed(lz4, in, off, len, out, outLen);
    } catch (MalformedInputException | IndexOutOfBoundsException e) {
      // not Hadoop-framed: fall through
    }
    if (framed == outLen) {
      return framed;
    }
    try {
      return lz4.decompress(in, off, len, out, 0, outLen);
    } catch (MalformedInputException e) {
      throw new IOException("an LZ4 page is neither Hadoop-framed nor a raw LZ4 block: " + e.getMessage(), e);
    }
  }

  private static int hadoopFramed(Lz4Decompressor lz4, byte[] in, int off, int len, byte[] out, int outLen) {
    int p = off;
    int end = off + len;
    int written = 0;
    while (p < end) {
      if (end - p < 8) {
        return -1;
      }
      int blockSize = beInt(in, p);
      p += 4;
      if (blockSize < 0 || written + blockSize > outLen) {
        return -1;
      }
      int blockEnd = written + blockSize;
      while (written < blockEnd) {
        if (end - p < 4) {
          return -1;
        }
        int chunk = beInt(in, p);
        p += 4;
        if (chunk <= 0 || chunk > end - p) {
          return -1;
        }
        int n = lz4.decompress(in, p, chunk, out, written, blockEnd - written);
        p += chunk;
        written += n;
      }
    }
    return written;
  }

  private static int beInt(byte[] b, int p) {
    return (b[p] & 0xFF) << 24 | (b[p + 1] & 0xFF) << 16 | (b[p + 2] & 0xFF) << 8 | (b[p + 3] & 0xFF);
  }

  /** A page decompressor over heap arrays; a recycling one reuses its input and output arrays. */
  private static final class Pages implements BytesInputDecompressor {
    private final String name;
    private final Codec codec;
    private final boolean recycling;
    /** The array of the page returned last (recycling only). */
    private byte[] out = new byte[0];
    /** Scratch copy of an input that is not array-backed (recycling only). */
    private byte[] src = new byte[0];

    Pages(String name, Codec codec, boolean recycling) {
      this.name = name;
      this.codec = codec;
      this.recycling = recycling;
    }

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
        src = recycling && this.src.length >= len ? this.src : new byte[len];
        if (recycling) {
          this.src = src;
        }
        in.duplicate().get(src, 0, len);
        off = 0;
      }
      if (len == 0 && uncompressedSize == 0) {
        return BytesInput.empty(); // a v2 page of nulls only: no value bytes, nothing to decompress
      }
      byte[] out = recycling && this.out.length >= uncompressedSize ? this.out : new byte[uncompressedSize];
      if (recycling) {
        this.out = out;
      }
      int n;
      try {
        n = codec.decompress(src, off, len, out, uncompressedSize);
      } catch (IOException e) {
        throw e;
      } catch (RuntimeException e) { // the libraries' own "malformed input" exceptions
        throw new IOException("cannot decompress a " + name + " page: " + e.getMessage(), e);
      }
      if (n != uncompressedSize) {
        throw new IOException("a " + name + " page decompressed to " + n + " bytes but its header says " + uncompressedSize);
      }
      return BytesInput.from(out, 0, uncompressedSize);
    }

    @Override
    public void decompress(ByteBuffer input, int compressedSize, ByteBuffer output, int uncompressedSize)
        throws IOException {
      byte[] src = new byte[compressedSize];
      input.duplicate().get(src);
      ByteBuffer out = decompress(BytesInput.from(src), uncompressedSize).toByteBuffer();
      output.put(out);
    }

    @Override
    public void release() {
      // nothing pooled
    }
  }
}
