package dev.sluice.io.parquet.internal;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import org.brotli.dec.BrotliInputStream;

/**
 * The Brotli decoder of Parquet pages, the one class that names {@code org.brotli:dec}, an optional
 * dependency: {@link PageCodecs} loads it only for a Brotli page, and {@link ParquetFileInfo#checkCodecs}
 * refuses a Brotli column when the decoder is missing, before any page is read.
 */
final class BrotliPages {
  private BrotliPages() {}

  /** A stream of the decompressed bytes of {@code len} bytes of {@code in} from {@code off}. */
  static InputStream stream(byte[] in, int off, int len) throws IOException {
    return new BrotliInputStream(new ByteArrayInputStream(in, off, len));
  }
}
