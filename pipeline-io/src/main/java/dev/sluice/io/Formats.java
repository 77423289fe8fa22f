package dev.sluice.io;

import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/**
 * The registry of formats: each registers a probe (magic bytes and layout) and an opener through
 * {@link ServiceLoader}; the CLI and {@link #open(Path)} use it to recognize a path's format.
 */
public final class Formats {
  private static final List<DatasetFormat> FORMATS = load();

  private Formats() {}

  private static List<DatasetFormat> load() {
    List<DatasetFormat> out = new ArrayList<>();
    ServiceLoader.load(DatasetFormat.class, Formats.class.getClassLoader()).forEach(out::add);
    return List.copyOf(out);
  }

  /** Every registered format, in registration order. */
  public static List<DatasetFormat> all() {
    return FORMATS;
  }

  /** The names of the registered formats. */
  public static List<String> names() {
    return FORMATS.stream().map(DatasetFormat::name).collect(Collectors.toList());
  }

  /**
   * The format called {@code name}.
   *
   * @throws IllegalArgumentException naming the known formats
   */
  public static DatasetFormat named(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    for (DatasetFormat f : FORMATS) {
      if (f.name().equals(n)) {
        return f;
      }
    }
    throw new IllegalArgumentException("unknown format '" + name + "'; known formats: " + names());
  }

  /**
   * The first format whose probe recognizes {@code path}; else the first format that
   * {@linkplain DatasetFormat#claimsByName claims it by its name}, so that its opener reports what
   * is wrong with it.
   *
   * @throws DatasetIOException if the path does not exist or cannot be read
   * @throws DatasetFormatException if no format recognizes it
   */
  public static DatasetFormat detect(Path path) {
    if (!Files.exists(path)) {
      throw new DatasetIOException(path.toString(), "no such file or directory", null);
    }
    for (DatasetFormat f : FORMATS) {
      try {
        if (f.probe(path)) {
          return f;
        }
      } catch (IOException e) {
        throw new DatasetIOException(path.toString(), "cannot read: " + e.getMessage(), e);
      }
    }
    for (DatasetFormat f : FORMATS) {
      if (f.claimsByName(path)) {
        return f;
      }
    }
    throw new DatasetFormatException(path.toString(), null,
        "not a recognized dataset (known formats: " + names() + "); use --format to name one");
  }

  /** Opens {@code path} in the format its contents show. */
  public static Dataset<Example> open(Path path) {
    return detect(path).open(path);
  }
}
