package dev.sluice.examples.cli;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** A byte count for an option: {@code 67108864}, {@code 64k}, {@code 64m}, {@code 1g}, {@code 1t} (powers of 1024). */
final class ByteSize implements ITypeConverter<Long> {
  private static final Pattern SIZE = Pattern.compile("(\\d+)([kmgt]?)(i?b)?");

  @Override
  public Long convert(String value) {
    Matcher m = SIZE.matcher(value.trim().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new TypeConversionException("'" + value + "' is not a byte count: expected a number of bytes with an "
          + "optional k, m, g or t suffix, such as 67108864, 64m or 1g");
    }
    int shift = switch (m.group(2)) {
      case "k" -> 10;
      case "m" -> 20;
      case "g" -> 30;
      case "t" -> 40;
      default -> 0;
    };
    try {
      long n = Long.parseLong(m.group(1));
      if (n <= 0) {
        throw new TypeConversionException("'" + value + "': a byte count must be more than 0 bytes");
      }
      if (n > (Long.MAX_VALUE >> shift)) {
        throw new NumberFormatException();
      }
      return n << shift;
    } catch (NumberFormatException e) {
      throw new TypeConversionException("'" + value + "' is too large for a byte count");
    }
  }

  /** A byte count that may be 0 (off), for budgets. */
  static final class OrZero implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      return value.trim().matches("0+([kKmMgGtT]?)([iI]?[bB])?") ? 0L : new ByteSize().convert(value);
    }
  }
}
