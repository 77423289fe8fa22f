package dev.sluice.io.directory;

/** What each file of a directory dataset holds. */
public enum SampleFiles {
  /** Every file ends in {@code .npy}: {@link #NPY}, otherwise {@link #RAW}. */
  AUTO,
  /** Each file's bytes are one value of a {@code bytes} field named {@value Directory#RAW_FIELD}. */
  RAW,
  /**
   * Each file is one {@code .npy} array, the value of a field named {@value Directory#NPY_FIELD}; the
   * arrays share a dtype, and their shapes agree except, possibly, in the first dimension (which is
   * then variable).
   */
  NPY
}
