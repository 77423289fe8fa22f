package dev.sluice.examples;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code --name value} options and {@code --flag} switches of an example's {@code main}: an
 * unknown option, or an option without its value, is refused naming it and the options there are.
 */
final class ExampleArgs {
  private final Map<String, String> values = new HashMap<>();
  private final Set<String> flags = new HashSet<>();

  private ExampleArgs() {}

  /**
   * Parses {@code args}.
   *
   * @param options the names that take a value ({@code "--rows"})
   * @param switches the names that take none ({@code "--cache"})
   * @throws IllegalArgumentException for an unknown name or a missing value
   */
  static ExampleArgs parse(String[] args, List<String> options, List<String> switches) {
    ExampleArgs parsed = new ExampleArgs();
    for (int i = 0; i < args.length; i++) {
      String name = args[i];
      if (switches.contains(name)) {
        parsed.flags.add(name);
      } else if (options.contains(name)) {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(name + " needs a value");
        }
        parsed.values.put(name, args[++i]);
      } else {
        throw new IllegalArgumentException("unknown option " + name + " (options: "
            + String.join(", ", options) + (switches.isEmpty() ? "" : ", " + String.join(", ", switches)) + ")");
      }
    }
    return parsed;
  }

  /** Whether the switch {@code name} was given. */
  boolean has(String name) {
    return flags.contains(name);
  }

  /** The value of {@code name}, or null. */
  String get(String name) {
    return values.get(name);
  }

  /** The value of {@code name} as a path, or null. */
  Path path(String name) {
    String v = values.get(name);
    return v == null ? null : Path.of(v);
  }

  /** The value of {@code name} as a long, or {@code otherwise}. */
  long longValue(String name, long otherwise) {
    String v = values.get(name);
    return v == null ? otherwise : Long.parseLong(v);
  }

  /** The value of {@code name} as an int, or {@code otherwise}. */
  int intValue(String name, int otherwise) {
    String v = values.get(name);
    return v == null ? otherwise : Integer.parseInt(v);
  }

  /** The value of {@code name} as a double, or {@code otherwise}. */
  double doubleValue(String name, double otherwise) {
    String v = values.get(name);
    return v == null ? otherwise : Double.parseDouble(v);
  }
}
