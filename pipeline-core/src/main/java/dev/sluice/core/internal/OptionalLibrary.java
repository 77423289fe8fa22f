package dev.sluice.core.internal;

import dev.sluice.core.MissingDependencyException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An optional dependency of a Sluice module: the feature that needs it, the Maven coordinates a
 * user adds, and one class of each artifact whose presence shows it is on the class path. The
 * probe (a look-up of the class file as a resource: no class of the library is loaded) runs once
 * per library; {@link #require} then costs a field read.
 *
 * <p>Entry points call {@link #require} before any class that names the library's types is
 * loaded, so that a missing jar is one {@link MissingDependencyException} naming the coordinates
 * instead of a {@link NoClassDefFoundError} somewhere later.
 */
public final class OptionalLibrary {
  /** parquet-java's reader and writer: the {@code parquet} format ({@code Parquet.open}). */
  public static final OptionalLibrary PARQUET = new OptionalLibrary("Parquet support", "pipeline-io",
      Map.of("org.apache.parquet:parquet-hadoop", "org.apache.parquet.hadoop.ParquetFileReader"));
  /** Google's Brotli decoder: Parquet pages compressed with Brotli. */
  public static final OptionalLibrary BROTLI = new OptionalLibrary("Reading Brotli-compressed Parquet pages",
      "pipeline-io", Map.of("org.brotli:dec", "org.brotli.dec.BrotliInputStream"));
  /** Arrow Java with its Netty allocator and buffer codecs: the {@code arrow} format ({@code Arrow.open}). */
  public static final OptionalLibrary ARROW = new OptionalLibrary("Arrow IPC support", "pipeline-io", ordered(
      "org.apache.arrow:arrow-vector", "org.apache.arrow.vector.VectorSchemaRoot",
      "org.apache.arrow:arrow-memory-netty", "org.apache.arrow.memory.netty.NettyAllocationManager",
      "io.netty:netty-buffer", "io.netty.buffer.PooledByteBufAllocator",
      "org.apache.arrow:arrow-compression", "org.apache.arrow.compression.CommonsCompressionFactory"));
  /** Chronicle Map, the index of the shared cache ({@code Pipeline.cache}). */
  public static final OptionalLibrary CHRONICLE_MAP = new OptionalLibrary("The shared cache (Pipeline.cache)",
      "pipeline-operators", Map.of("net.openhft:chronicle-map", "net.openhft.chronicle.map.ChronicleMap"));
  /** jhdf, a pure-Java HDF5 reader: the {@code hdf5} format ({@code Hdf5.open}), netCDF-4 included. */
  public static final OptionalLibrary JHDF = new OptionalLibrary("HDF5 and netCDF-4 support", "pipeline-io",
      Map.of("io.jhdf:jhdf", "io.jhdf.HdfFile"));
  /** Hadoop's client: datasets named by a Hadoop {@code FileSystem} URI ({@code hdfs://}, {@code s3a://}). */
  public static final OptionalLibrary HADOOP = new OptionalLibrary("Reading and writing datasets through Hadoop FileSystem URIs",
      "pipeline-io", ordered(
      "org.apache.hadoop:hadoop-client-api", "org.apache.hadoop.fs.FileSystem",
      "org.apache.hadoop:hadoop-client-runtime", "org.apache.hadoop.shaded.org.apache.commons.io.IOUtils"));

  private final String feature;
  private final String module;
  private final Map<String, String> probes;
  private volatile List<String> missing;

  private OptionalLibrary(String feature, String module, Map<String, String> probes) {
    this.feature = feature;
    this.module = module;
    this.probes = probes;
  }

  private static Map<String, String> ordered(String... coordinatesThenClass) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < coordinatesThenClass.length; i += 2) {
      m.put(coordinatesThenClass[i], coordinatesThenClass[i + 1]);
    }
    return m;
  }

  /** The feature that needs this library ({@code "Parquet support"}). */
  public String feature() {
    return feature;
  }

  /** The {@code groupId:artifactId} of every artifact of this library. */
  public List<String> coordinates() {
    return List.copyOf(probes.keySet());
  }

  /** The coordinates of the artifacts not on the class path (probed once); empty when all are there. */
  public List<String> missing() {
    List<String> m = missing;
    if (m == null) {
      List<String> out = new ArrayList<>();
      ClassLoader loader = OptionalLibrary.class.getClassLoader();
      for (Map.Entry<String, String> e : probes.entrySet()) {
        if (loader.getResource(e.getValue().replace('.', '/') + ".class") == null) {
          out.add(e.getKey());
        }
      }
      m = List.copyOf(out);
      missing = m;
    }
    return m;
  }

  /** True when every artifact of this library is on the class path. */
  public boolean isPresent() {
    return missing().isEmpty();
  }

  /**
   * Returns when the library is on the class path.
   *
   * @throws MissingDependencyException naming the feature and the coordinates to add
   */
  public void require() {
    require(null);
  }

  /**
   * Returns when the library is on the class path.
   *
   * @param resource the file or directory the feature was asked for, named first in the message;
   *     may be null
   * @throws MissingDependencyException naming the feature and the coordinates to add
   */
  public void require(String resource) {
    List<String> absent = missing();
    if (!absent.isEmpty()) {
      throw new MissingDependencyException(feature, coordinates(), message(resource, absent));
    }
  }

  private String message(String resource, List<String> absent) {
    List<String> all = coordinates();
    boolean one = all.size() == 1;
    StringBuilder sb = new StringBuilder();
    if (resource != null) {
      sb.append(resource).append(": ");
    }
    sb.append(feature).append(" needs ").append(join(all)).append(" on the class path");
    if (absent.size() < all.size()) {
      sb.append(" (missing: ").append(join(absent)).append(')');
    }
    sb.append(" (add ").append(one ? "it" : "them").append(" next to ").append(module)
        .append("; the sluice-bom manages ").append(one ? "its version" : "their versions").append(')');
    return sb.toString();
  }

  private static String join(List<String> items) {
    if (items.size() == 1) {
      return items.get(0);
    }
    return String.join(", ", items.subList(0, items.size() - 1)) + " and " + items.get(items.size() - 1);
  }
}
