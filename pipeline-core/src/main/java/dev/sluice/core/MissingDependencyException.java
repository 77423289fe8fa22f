package dev.sluice.core;

import java.util.List;

/**
 * A feature used without the optional library it needs on the class path (Parquet, Arrow IPC, the
 * shared cache), raised where the feature is entered ({@code Parquet.open}, {@code Arrow.open},
 * {@code Pipeline.cache}, opening a file that {@code Formats} recognized) rather than as a
 * {@link NoClassDefFoundError} later. The message names the feature and the Maven coordinates to
 * add, for example {@code "Parquet support needs org.apache.parquet:parquet-hadoop on the class
 * path (add it next to pipeline-io; the sluice-bom manages its version)"}.
 */
public class MissingDependencyException extends UnsupportedOperationException {
  private static final long serialVersionUID = 1L;

  private final String feature;
  private final List<String> coordinates;

  /**
   * @param feature the feature asked for ({@code "Parquet support"})
   * @param coordinates the {@code groupId:artifactId} of every library the feature needs
   * @param message the whole message, naming the feature and the coordinates
   */
  public MissingDependencyException(String feature, List<String> coordinates, String message) {
    super(message);
    this.feature = feature;
    this.coordinates = List.copyOf(coordinates);
  }

  /** The feature asked for ({@code "Parquet support"}). */
  public String feature() {
    return feature;
  }

  /** The {@code groupId:artifactId} of every library the feature needs, whether present or not. */
  public List<String> coordinates() {
    return coordinates;
  }
}
