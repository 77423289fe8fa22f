package dev.sluice.operators.internal;

import dev.sluice.core.Dataset;
import java.util.List;
import java.util.Locale;

/**
 * The name of a pipeline's source in its stage meters ({@code "parquet"} in {@code "parquet decode"}):
 * the format when Sluice recognizes it from the dataset's type or description, else {@code "source"}.
 */
final class SourceNames {
  private static final List<String> KNOWN = List.of("parquet", "arrow", "npy", "shard", "directory", "synthetic",
      "range", "cache", "pipeline");

  private SourceNames() {}

  static String of(Dataset<?> source) {
    String name = find(source.getClass().getSimpleName());
    if (name == null) {
      String text = String.valueOf(source);
      name = find(text.length() > 200 ? text.substring(0, 200) : text);
    }
    return name == null ? "source" : name.equals("shard") ? "shards" : name;
  }

  private static String find(String text) {
    String lower = text.toLowerCase(Locale.ROOT);
    for (String k : KNOWN) {
      if (lower.contains(k)) {
        return k;
      }
    }
    return null;
  }
}
