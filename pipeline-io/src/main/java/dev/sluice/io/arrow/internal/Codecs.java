package dev.sluice.io.arrow.internal;

import com.github.luben.zstd.Zstd;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import org.apache.commons.compress.compressors.lz4.FramedLZ4CompressorInputStream;

/**
 * Decompression of IPC body buffers (LZ4 frame with Apache Commons Compress, as Arrow Java's own
 * codec does; ZSTD with zstd-jni) straight into the memory they are decoded in.
 */
final class Codecs {
  /** IPC codec ids (BodyCompression.codec). */
  static final byte LZ4_FRAME = 0;
  static final byte ZSTD = 1;
  /** The most an LZ4 frame can expand: one byte of input never yields more than 255 of output. */
  private static final long LZ4_MAX_RATIO = 255;

  private Codecs() {}

  static String name(byte codec) {
    return codec == LZ4_FRAME ? "LZ4_FRAME" : codec == ZSTD ? "ZSTD" : "codec " + codec;
  }

  /**
   * Why {@code declared} bytes cannot come out of {@code src} with {@code codec}, or null when they
   * may: the bound every valid frame obeys (LZ4's ratio, ZSTD's frame content size when the frame
   * states it), so that a damaged length never makes us allocate more than the data can hold.
   *
   * @param whole the bytes the whole array needs (bound of a ZSTD frame that states no size)
   */
  static String implausible(byte codec, ByteBuffer src, long declared, long whole) {
    if (codec == LZ4_FRAME) {
      long max = LZ4_MAX_RATIO * src.remaining() + 64;
      return declared > max ? "an LZ4 frame of " + src.remaining() + " bytes holds at most " + max : null;
    }
    long content = src.isDirect()
        ? Zstd.getDirectByteBufferFrameContentSize(src, src.position(), src.remaining())
        : Zstd.getFrameContentSize(bytes(src));
    if (content >= 0) {
      return content != declared ? "its ZSTD frame holds " + content : null;
    }
    if (content == -1) { // the frame does not say
      return declared > 2 * whole + 4096 ? "the array needs only " + whole : null;
    }
    return "it is not a ZSTD frame (" + Zstd.getErrorName(content) + ")";
  }

  /**
   * Decompresses all of {@code src} into {@code dst} (position 0, limit the declared length) and
   * returns the bytes it decompressed to, or -1 when they were more than {@code dst} holds.
   *
   * @throws IOException when the frame is corrupt
   */
  static long decompress(byte codec, ByteBuffer src, ByteBuffer dst) throws IOException {
    return codec == LZ4_FRAME ? lz4(src, dst) : zstd(src, dst);
  }

  private static long lz4(ByteBuffer src, ByteBuffer dst) throws IOException {
    int cap = dst.limit();
    long total = 0;
    try (InputStream in = new FramedLZ4CompressorInputStream(new BufferInput(src.duplicate()))) {
      byte[] chunk = new byte[64 << 10];
      for (int n; (n = in.read(chunk)) >= 0; ) {
        if (total + n > cap) {
          return -1;
        }
        dst.put((int) total, chunk, 0, n);
        total += n;
      }
    } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
      throw new IOException(e.toString(), e);
    }
    return total;
  }

  private static long zstd(ByteBuffer src, ByteBuffer dst) throws IOException {
    int cap = dst.limit();
    long n;
    if (src.isDirect() && dst.isDirect()) {
      n = Zstd.decompressDirectByteBuffer(dst, 0, cap, src, src.position(), src.remaining());
    } else {
      byte[] in = bytes(src);
      if (dst.hasArray()) {
        n = Zstd.decompressByteArray(dst.array(), dst.arrayOffset(), cap, in, 0, in.length);
      } else {
        byte[] out = new byte[cap];
        n = Zstd.decompressByteArray(out, 0, cap, in, 0, in.length);
        if (!Zstd.isError(n)) {
          dst.put(0, out, 0, (int) n);
        }
      }
    }
    if (Zstd.isError(n)) {
      String error = Zstd.getErrorName(n);
      if (error.toLowerCase(java.util.Locale.ROOT).contains("too small")) {
        return -1;
      }
      throw new IOException("ZSTD: " + error);
    }
    return n;
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] a = new byte[b.remaining()];
    b.duplicate().get(a);
    return a;
  }

  /** The bytes of a buffer as a stream. */
  private static final class BufferInput extends InputStream {
    private final ByteBuffer b;

    BufferInput(ByteBuffer b) {
      this.b = b;
    }

    @Override
    public int read() {
      return b.hasRemaining() ? b.get() & 0xff : -1;
    }

    @Override
    public int read(byte[] dst, int off, int len) {
      if (len == 0) {
        return 0;
      }
      if (!b.hasRemaining()) {
        return -1;
      }
      int n = Math.min(len, b.remaining());
      b.get(dst, off, n);
      return n;
    }

    @Override
    public int available() {
      return b.remaining();
    }
  }
}
