package dev.sluice.io.parquet.internal;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.internal.Fingerprints;
import dev.sluice.core.internal.OptionalLibrary;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.crypto.ParquetCryptoRuntimeException;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;

/** One opened Parquet file: its name for messages, how to read it, and its footer. */
public final class ParquetFileInfo {
  /** Codecs Sluice decompresses. */
  static final Set<CompressionCodecName> SHIPPED_CODECS = PageCodecs.CODECS;

  private final String name;
  private final InputFile input;
  /** The checked offset indexes read so far, by row group and column path; empty when a chunk has none. */
  private final java.util.concurrent.ConcurrentHashMap<String, java.util.Optional<RangePages.PageIndex>> pageIndexes =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final ParquetMetadata footer;

  private ParquetFileInfo(String name, InputFile input, ParquetMetadata footer) {
    this.name = name;
    this.input = input;
    this.footer = footer;
  }

  public String name() {
    return name;
  }

  public InputFile input() {
    return input;
  }

  public ParquetMetadata footer() {
    return footer;
  }

  public List<BlockMetaData> rowGroups() {
    return footer.getBlocks();
  }

  /**
   * What the file's content depends on: a local file's path, size and modification time (a Hadoop
   * URI's name and length), and each row group's rows and sizes as the footer lists them.
   */
  public String fingerprint() {
    StringBuilder sb = new StringBuilder();
    Path local = localPath();
    if (local != null) {
      sb.append(Fingerprints.file(local));
    } else {
      long length;
      try {
        length = input.getLength();
      } catch (IOException e) {
        throw new DatasetIOException(name, "cannot read its length: " + e, e);
      }
      sb.append("uri ").append(name).append(' ').append(length).append('\n');
    }
    for (BlockMetaData b : footer.getBlocks()) {
      sb.append("rowgroup ").append(b.getRowCount()).append(' ').append(b.getTotalByteSize()).append(' ')
          .append(b.getCompressedSize()).append('\n');
    }
    return sb.toString();
  }

  /** The local file this is, or null for a Hadoop URI other than {@code file:}. */
  private Path localPath() {
    try {
      if (name.startsWith("file:")) {
        return Path.of(URI.create(name));
      }
      if (!name.contains("://")) {
        return Path.of(name);
      }
    } catch (RuntimeException e) {
      return null;
    }
    return null;
  }

  public long rowCount() {
    long n = 0;
    for (BlockMetaData b : footer.getBlocks()) {
      n += b.getRowCount();
    }
    return n;
  }

  static ParquetReadOptions readOptions(boolean verifyChecksums) {
    return ReadOptions.of(verifyChecksums);
  }

  /**
   * Reads and checks the footer of the local file {@code path}, read through a mapping of the
   * whole file ({@code mapped}) or a window mapped per read.
   *
   * @throws DatasetFormatException for a file that is not Parquet, truncated or with a corrupt footer
   * @throws UnsupportedFormatException for encrypted files and codecs Sluice cannot decompress
   */
  public static ParquetFileInfo openLocal(Path path, boolean mapped) {
    return open(path.toString(), mapped ? new MappedInputFile(path) : new WindowedInputFile(path));
  }

  /**
   * Reads and checks the footer of {@code input}.
   *
   * @throws DatasetFormatException for a file that is not Parquet, truncated or with a corrupt footer
   * @throws UnsupportedFormatException for encrypted files and codecs Sluice cannot decompress
   */
  public static ParquetFileInfo open(String name, InputFile input) {
    long length;
    byte[] head = new byte[4];
    byte[] tail = new byte[8];
    try (SeekableInputStream in = input.newStream()) {
      length = input.getLength();
      if (length < 12) {
        throw new DatasetFormatException(name, null, "not a Parquet file: " + length
            + " bytes is shorter than the 12 bytes of magic and footer length (truncated?)");
      }
      in.seek(0);
      in.readFully(head);
      in.seek(length - 8);
      in.readFully(tail);
    } catch (FileNotFoundException | NoSuchFileException e) {
      throw new DatasetIOException(name, "no such file", e);
    } catch (IOException e) {
      throw new DatasetIOException(name, "cannot read: " + e.getMessage(), e);
    }
    String headMagic = new String(head, java.nio.charset.StandardCharsets.ISO_8859_1);
    String tailMagic = new String(tail, 4, 4, java.nio.charset.StandardCharsets.ISO_8859_1);
    if (headMagic.equals("PARE") || tailMagic.equals("PARE")) {
      throw new UnsupportedFormatException(name, "footer", "the file is encrypted (encrypted footer, magic PARE); "
          + "Sluice does not take decryption keys, decrypt it first");
    }
    if (!headMagic.equals("PAR1")) {
      throw new DatasetFormatException(name, "byte 0", "not a Parquet file: expected magic PAR1 but found "
          + printable(head));
    }
    if (!tailMagic.equals("PAR1")) {
      throw new DatasetFormatException(name, "byte " + (length - 4), "expected magic PAR1 at the end but found "
          + printable(java.util.Arrays.copyOfRange(tail, 4, 8)) + " (truncated or still being written?)");
    }
    long footerLen = Integer.toUnsignedLong(java.nio.ByteBuffer.wrap(tail, 0, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt());
    if (footerLen + 12 > length) {
      throw new DatasetFormatException(name, "byte " + (length - 8), "the footer length says " + footerLen
          + " bytes but the file has only " + length + " bytes (truncated or corrupt footer)");
    }
    ParquetMetadata footer;
    try (ParquetFileReader r = ParquetFileReader.open(input, readOptions(false))) {
      footer = r.getFooter();
    } catch (ParquetCryptoRuntimeException e) {
      throw new UnsupportedFormatException(name, "footer", "the file has encrypted columns; Sluice does not take "
          + "decryption keys, decrypt it first (" + e.getMessage() + ")", e);
    } catch (IOException | RuntimeException e) {
      throw new DatasetFormatException(name, "footer", "corrupt footer: " + e.getMessage(), e);
    }
    long rows = 0;
    for (int i = 0; i < footer.getBlocks().size(); i++) {
      long n = footer.getBlocks().get(i).getRowCount();
      if (n < 0 || rows > Long.MAX_VALUE - n) {
        throw new DatasetFormatException(name, "row group " + i, "the footer says " + n + " rows"
            + (n < 0 ? ", fewer than 0" : " after " + rows + " in the row groups before it, more than a file can index"));
      }
      rows += n;
      for (ColumnChunkMetaData c : footer.getBlocks().get(i).getColumns()) {
        if (c.isEncrypted()) {
          throw new UnsupportedFormatException(name, "row group " + i + ", column '" + c.getPath().toDotString() + "'",
              "the column is encrypted; Sluice does not take decryption keys, decrypt the file first");
        }
      }
    }
    return new ParquetFileInfo(name, input, footer);
  }

  /**
   * Checks that every column chunk of the given paths uses a codec Sluice can decompress.
   *
   * @throws UnsupportedFormatException naming the first chunk whose codec Sluice does not decompress
   * @throws dev.sluice.core.MissingDependencyException naming the first Brotli chunk when the Brotli
   *     decoder ({@code org.brotli:dec}) is not on the class path
   */
  public void checkCodecs(Set<String> paths) {
    for (int i = 0; i < footer.getBlocks().size(); i++) {
      for (ColumnChunkMetaData c : footer.getBlocks().get(i).getColumns()) {
        CompressionCodecName codec = c.getCodec();
        if (paths.contains(c.getPath().toDotString()) && !SHIPPED_CODECS.contains(codec)) {
          throw new UnsupportedFormatException(name, "row group " + i + ", column '" + c.getPath().toDotString() + "'",
              "codec " + codec + " is not supported: Sluice decompresses " + SHIPPED_CODECS + "; "
                  + hint(codec));
        }
        if (codec == CompressionCodecName.BROTLI && paths.contains(c.getPath().toDotString())) {
          OptionalLibrary.BROTLI.require(name + ", row group " + i + ", column '" + c.getPath().toDotString() + "'");
        }
      }
    }
  }

  private static String hint(CompressionCodecName codec) {
    return codec == CompressionCodecName.LZO
        ? "re-write the file with another codec (the only Java LZO decoder, hadoop-lzo, is GPL-licensed)"
        : "re-write the file with one of those codecs";
  }

  private static String printable(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (byte x : b) {
      sb.append(String.format("%02x", x & 0xFF));
    }
    return "0x" + sb;
  }

  /**
   * A reader on this file positioned for row group reads, reusing the footer read at open. Its
   * page readers recycle page arrays: a page is valid until the next page of its column chunk is
   * read ({@link PageCodecs#recycling()}).
   */
  ParquetFileReader newReader(boolean verifyChecksums) throws IOException {
    SeekableInputStream in = input.newStream();
    try {
      return ParquetFileReader.open(input, footer, ReadOptions.recycling(verifyChecksums), in);
    } catch (IOException | RuntimeException e) {
      in.close();
      throw e;
    }
  }

  /**
   * The offset index of column chunk {@code meta} of row group {@code rowGroup} (read through
   * {@code in} the first time, then kept), or null when the file has no usable one for it.
   */
  RangePages.PageIndex pageIndex(int rowGroup, ColumnChunkMetaData meta, SeekableInputStream in) {
    String key = rowGroup + "/" + meta.getPath().toDotString();
    java.util.Optional<RangePages.PageIndex> known = pageIndexes.get(key);
    if (known == null) {
      org.apache.parquet.format.OffsetIndex index =
          RangePages.offsetIndex(in, meta, rowGroups().get(rowGroup).getRowCount());
      known = java.util.Optional.ofNullable(index == null ? null : RangePages.PageIndex.of(index));
      pageIndexes.putIfAbsent(key, known);
    }
    return known.orElse(null);
  }

  /**
   * The rows of row group {@code rowGroup} at which a read of the columns {@code paths} (dotted
   * column paths) starts cheaply: the page starts of one of those columns, from its offset index.
   * The column is the one whose page starts waste the fewest decoded bytes when every block starts
   * on them: a block that starts inside another column's page decompresses that page and passes
   * over its rows before the start, so a block start costs, for every column, the rows of its page
   * before the start times the column's bytes per row. Columns whose pages start on the same rows
   * count once. Null when a chunk has no (usable) offset index or no column is named.
   */
  public long[] pageStarts(int rowGroup, Set<String> paths) {
    BlockMetaData block = footer.getBlocks().get(rowGroup);
    long rows = block.getRowCount();
    if (rows == 0) {
      return null;
    }
    java.util.Map<java.util.List<Long>, double[]> patterns = new java.util.LinkedHashMap<>(); // starts -> bytes per row
    try (SeekableInputStream in = input instanceof CachedInputFile c ? c.newMetadataStream() : input.newStream()) {
      for (ColumnChunkMetaData c : block.getColumns()) {
        if (!paths.contains(c.getPath().toDotString())) {
          continue;
        }
        RangePages.PageIndex index = pageIndex(rowGroup, c, in);
        if (index == null) {
          return null;
        }
        java.util.List<Long> starts = java.util.Arrays.stream(index.rows()).boxed().toList();
        patterns.computeIfAbsent(starts, k -> new double[1])[0] += c.getTotalUncompressedSize() / (double) rows;
      }
    } catch (IOException e) {
      throw new DatasetIOException(name, "row group " + rowGroup + ": cannot read: " + e.getMessage(), e);
    }
    long[] best = null;
    double bestWaste = Double.MAX_VALUE;
    for (java.util.List<Long> candidate : patterns.keySet()) {
      double waste = 0;
      for (var other : patterns.entrySet()) {
        if (other.getKey() == candidate) {
          continue;
        }
        long[] theirs = other.getKey().stream().mapToLong(Long::longValue).toArray();
        for (long start : candidate) {
          int at = java.util.Arrays.binarySearch(theirs, start);
          long before = at >= 0 ? 0 : start - theirs[Math.max(0, -at - 2)];
          waste += before * other.getValue()[0];
        }
      }
      if (waste < bestWaste) {
        bestWaste = waste;
        best = candidate.stream().mapToLong(Long::longValue).toArray();
      }
    }
    return best;
  }

  /**
   * Lets go of what the file holds between reads: the pages its range reads kept are dropped, a
   * memory mapping is left to the GC.
   */
  public void release() {
    PageCache.shared().forget(this);
    if (input instanceof MappedInputFile m) {
      m.release();
    } else if (input instanceof CachedInputFile c) {
      c.file().close();
    }
  }

  @Override
  public String toString() {
    return name;
  }
}
