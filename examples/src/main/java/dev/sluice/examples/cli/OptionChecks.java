package dev.sluice.examples.cli;

/**
 * Range checks of option values whose message names the option as the user typed it
 * ({@code "--batch must be > 0 but was 0"}); the command line turns the exception into one
 * {@code sluice: } line and exit status 2.
 */
final class OptionChecks {
  private OptionChecks() {}

  /** Throws unless {@code value > 0}. */
  static void positive(String option, long value) {
    if (value <= 0) {
      throw new IllegalArgumentException(option + " must be > 0 but was " + value);
    }
  }

  /** Throws unless {@code value >= 0}. */
  static void nonNegative(String option, long value) {
    if (value < 0) {
      throw new IllegalArgumentException(option + " must be >= 0 but was " + value);
    }
  }
}
