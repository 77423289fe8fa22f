package dev.sluice.core;

/** A dataset of {@link Example}s whose fields are known before reading. */
public interface HasSchema {
  /** The fields every example carries, in source order. */
  Schema schema();
}
