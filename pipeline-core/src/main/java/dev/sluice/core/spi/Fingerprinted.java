package dev.sluice.core.spi;

/**
 * A dataset that can say what its elements depend on, so that a cache of them knows when they
 * changed: the files it reads with their sizes and modification times, its schema, its projection
 * and every option that changes what it delivers.
 *
 * <p>Contract: two datasets with equal fingerprints deliver the same elements in the same order; a
 * change to any input file (rewritten, touched, resized), to the selected columns or to a decoding
 * option gives a different fingerprint. The text is compared and hashed, never parsed; it may be
 * long (one line per file). A dataset that wraps another (a projection) describes itself through
 * the other's fingerprint, and returns null when the other cannot describe itself.
 */
public interface Fingerprinted {
  /** The canonical description of everything the elements depend on, or null when unknown. */
  String fingerprint();
}
