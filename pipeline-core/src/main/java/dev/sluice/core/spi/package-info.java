/**
 * Types for authors of sources and operators, not for code that composes pipelines: a pipeline
 * user never names them, an implementation of {@link dev.sluice.core.Dataset} or of an operator does.
 *
 * <ul>
 *   <li>{@link dev.sluice.core.spi.ColumnCursor}: the rows of a split range decoded one column at a
 *       time, which a {@link dev.sluice.core.BatchSplitDataset} that decodes columns separately
 *       opens for the window shuffle of the columnar path.
 *   <li>{@link dev.sluice.core.spi.Fingerprinted}: what a source's elements depend on, so that a
 *       cache of them knows when they changed.
 *   <li>{@link dev.sluice.core.spi.RefCount}: a reference count for memory that several batches a
 *       source emits share.
 *   <li>{@link dev.sluice.core.spi.StageCounters}: counts a stage or a source reports about its own
 *       work to the metrics of the pass it runs in.
 * </ul>
 *
 * <p>Source authors also use types of {@code dev.sluice.core} that pipeline code reads:
 * {@link dev.sluice.core.spi.BatchBuilder} and {@link dev.sluice.core.spi.ColumnBuilder} write batches into
 * pooled memory, which {@link dev.sluice.core.MemoryManager} hands out through
 * {@link dev.sluice.core.spi.BufferPool}s. The package is exported to every module, like
 * {@code dev.sluice.core}.
 */
package dev.sluice.core.spi;
