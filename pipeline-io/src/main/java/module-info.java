import dev.sluice.io.DatasetFormat;

/**
 * Sluice's sources and writers (npy, Sluice shards, Parquet, Arrow IPC, HDF5, directories) and the
 * format registry.
 *
 * <p>Exports {@code dev.sluice.io} and one package per format; the {@code internal} packages are
 * not exported. The module reads {@code dev.sluice.core} transitively. Each format's library is
 * optional: opening a file of a format whose library is missing throws a
 * {@code MissingDependencyException} naming it. On the module path the formats' libraries go on
 * the class path, read with {@code --add-reads dev.sluice.io=ALL-UNNAMED}: parquet-java's jars,
 * and Arrow's Netty allocator and Netty, hold parts of the same packages, which the module system
 * refuses. The formats are registered as {@link DatasetFormat} services. The same jar works
 * unchanged on the class path.
 */
module dev.sluice.io {
  requires transitive dev.sluice.core;
  requires com.fasterxml.jackson.databind;
  requires jdk.unsupported;

  // Arrow IPC. Arrow's schema and allocator appear in dev.sluice.io.arrow's API, yet these requires
  // are not transitive: a transitive one would make every reader of this module need Arrow to compile.
  requires static org.apache.arrow.vector;
  requires static org.apache.arrow.memory.core;
  requires static org.apache.arrow.format;
  requires static org.apache.arrow.compression;
  requires static org.apache.commons.compress;
  // the ZSTD codec of Parquet pages and Arrow buffers. parquet-java, Hadoop, Brotli's decoder and
  // the Snappy and LZ4 codecs are read from the class path (see above); the last three have no
  // declared module name to require.
  requires static com.github.luben.zstd_jni;
  // HDF5
  requires static io.jhdf;

  exports dev.sluice.io;
  exports dev.sluice.io.arrow;
  exports dev.sluice.io.directory;
  exports dev.sluice.io.hdf5;
  exports dev.sluice.io.npy;
  exports dev.sluice.io.parquet;
  exports dev.sluice.io.shards;

  uses DatasetFormat;
  provides DatasetFormat with
      dev.sluice.io.npy.NpyFormat,
      dev.sluice.io.shards.ShardsFormat,
      dev.sluice.io.parquet.ParquetFormat,
      dev.sluice.io.arrow.ArrowFormat,
      dev.sluice.io.directory.DirectoryFormat,
      dev.sluice.io.hdf5.Hdf5Format;
}
