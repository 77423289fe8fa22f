package dev.sluice.io.parquet.internal;

import java.lang.reflect.Constructor;
import java.util.HashMap;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.bytes.HeapByteBufferAllocator;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.format.converter.ParquetMetadataConverter;

/**
 * parquet-java read options that need no Hadoop on the class path: Sluice's own page codecs, no
 * filters (parquet-java reads whole row groups for Sluice; parts of row groups are read by
 * {@link RangePages}), page checksums as asked.
 *
 * <p>parquet-java's public builder ({@code ParquetReadOptions.builder(conf)}) creates Hadoop's
 * codec factory and loads {@code ParquetInputFormat} (a Hadoop MapReduce class) in its constructor,
 * even when a codec factory is given afterwards (apache/parquet-java#2818, #3780). So the options
 * are made with their own (package-private) constructor, which takes every setting as an
 * argument; should a later parquet-java change that constructor, the public builder is used
 * instead, which then needs Hadoop on the class path.
 */
final class ReadOptions {
  private static final int MAX_ALLOCATION = 8 * 1024 * 1024; // parquet-java's default
  private static final Constructor<ParquetReadOptions> CONSTRUCTOR = constructor();

  private ReadOptions() {}

  @SuppressWarnings("unchecked")
  private static Constructor<ParquetReadOptions> constructor() {
    try {
      Constructor<ParquetReadOptions> c = ParquetReadOptions.class.getDeclaredConstructor(
          boolean.class, boolean.class, boolean.class, boolean.class, boolean.class, boolean.class, boolean.class,
          boolean.class, boolean.class, FilterCompat.Filter.class, ParquetMetadataConverter.MetadataFilter.class,
          CompressionCodecFactory.class, org.apache.parquet.bytes.ByteBufferAllocator.class, int.class,
          java.util.Map.class, org.apache.parquet.crypto.FileDecryptionProperties.class,
          org.apache.parquet.hadoop.ParquetMetricsCallback.class, org.apache.parquet.conf.ParquetConfiguration.class);
      c.setAccessible(true);
      return c;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  static ParquetReadOptions of(boolean verifyChecksums) {
    return of(verifyChecksums, new PageCodecs());
  }

  /**
   * Options whose page decompressors are {@link PageCodecs#recycling() recycling}: for readers that
   * are done with a column chunk's page when they read its next one.
   */
  static ParquetReadOptions recycling(boolean verifyChecksums) {
    return of(verifyChecksums, PageCodecs.recycling());
  }

  private static ParquetReadOptions of(boolean verifyChecksums, PageCodecs codecs) {
    if (CONSTRUCTOR != null) {
      try {
        return CONSTRUCTOR.newInstance(
            false, // useSignedStringMinMax
            false, // useStatsFilter
            false, // useDictionaryFilter
            false, // useRecordFilter
            false, // useColumnIndexFilter
            verifyChecksums, // usePageChecksumVerification
            false, // useBloomFilter
            false, // useOffHeapDecryptBuffer
            false, // useHadoopVectoredIo
            FilterCompat.NOOP, ParquetMetadataConverter.NO_FILTER, codecs, new HeapByteBufferAllocator(),
            MAX_ALLOCATION, new HashMap<String, String>(), null, null, new PlainParquetConfiguration());
      } catch (ReflectiveOperationException | RuntimeException e) {
        // fall back to the public builder
      }
    }
    try {
      return builder(codecs, verifyChecksums);
    } catch (LinkageError e) {
      throw new UnsupportedOperationException("this parquet-java version needs Hadoop to build its read options: add "
          + "org.apache.hadoop:hadoop-client-api and org.apache.hadoop:hadoop-client-runtime", e);
    }
  }

  private static ParquetReadOptions builder(PageCodecs codecs, boolean verifyChecksums) {
    return ParquetReadOptions.builder(new PlainParquetConfiguration())
        .withCodecFactory(codecs)
        .usePageChecksumVerification(verifyChecksums)
        .useStatsFilter(false)
        .useDictionaryFilter(false)
        .useRecordFilter(false)
        .useColumnIndexFilter(false)
        .useBloomFilter(false)
        .build();
  }
}
