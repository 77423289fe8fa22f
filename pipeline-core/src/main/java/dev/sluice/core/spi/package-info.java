/**
 * Types for authors of sources and operators, not for code that composes pipelines: a pipeline
 * user never names them, an implementation of {@link dev.sluice.core.Dataset} or of an operator does.
 *
 * <ul>
 *   <li>{@link dev.sluice.core.spi.BatchBuilder}: fills the columns of one
 *       {@link dev.sluice.core.Batch} in pooled memory, row by row, by copying rows of other batches,
 *       or through the {@link dev.sluice.core.spi.ColumnBuilder} of each field, where a source that
 *       decodes column by column writes its rows, lists and values.
 *   <li>{@link dev.sluice.core.spi.ColumnBuffers}: the pooled or heap buffers of one column (null
 *       flags, offsets, values) that a source writes whole and wraps as the column itself, each
 *       allocated when first asked for.
 *   <li>{@link dev.sluice.core.spi.ColumnWindow}: rows of {@link dev.sluice.core.spi.ColumnCursor}s
 *       decoded one field at a time and gathered into batch builders.
 *   <li>{@link dev.sluice.core.spi.OffsetGather}: copies rows found by byte offset (in a mapped
 *       file) into a column, with the gather kernels the batch builders use.
 *   <li>{@link dev.sluice.core.spi.BufferPool} and {@link dev.sluice.core.spi.PooledBuffer}: the
 *       pooled off-heap buffers of one stage, which {@link dev.sluice.core.MemoryManager#pool(String)}
 *       hands out under the manager's limit.
 *   <li>{@link dev.sluice.core.spi.BudgetRequests}: the register of the budgets that running
 *       pipelines ask a process-wide cache for, the largest of which applies.
 *   <li>{@link dev.sluice.core.spi.ColumnCursor}: the rows of a split range decoded one column at a
 *       time, which a {@link dev.sluice.core.BatchSplitDataset} that decodes columns separately
 *       opens for the window shuffle of the columnar path.
 *   <li>{@link dev.sluice.core.spi.Fingerprinted}: what a source's elements depend on, so that a
 *       cache of them knows when they changed.
 *   <li>{@link dev.sluice.core.spi.RefCount}: a reference count for memory that several batches a
 *       source emits share.
 *   <li>{@link dev.sluice.core.spi.StageCounters}: counts a stage or a source reports about its own
 *       work to the metrics of the pass it runs in.
 *   <li>{@link dev.sluice.core.spi.WaitCancellation}: the cancel signal of a pass that ends the
 *       blocking waits of the work done for it (the wait for pooled memory), so that a cancel never
 *       interrupts a thread that may be reading a file.
 * </ul>
 *
 * <p>The package is exported to every module, like {@code dev.sluice.core}.
 */
package dev.sluice.core.spi;
