package dev.sluice.io.hdf5.internal;

import dev.sluice.core.Example;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.internal.mapped.MappedReads;
import dev.sluice.core.internal.mapped.MappedRows;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.io.hdf5.Hdf5Dataset;

/**
 * An HDF5 file whose chosen datasets are all contiguous (or compact, or strings): random access
 * over a mapping of the file. {@link #gather} copies each field's rows straight from the mapping
 * into the batch's columns (one bulk copy per run of consecutive rows), then swaps big-endian
 * values in place.
 */
public final class MappedHdf5Dataset extends Hdf5Fields implements Hdf5Dataset, RandomAccessDataset<Example> {

  /** Reads the fields of {@code file}, which must be {@linkplain Hdf5File#isRandomAccess random access}. */
  public MappedHdf5Dataset(Hdf5File file, long maxChunkBytes) {
    super(file, maxChunkBytes);
  }

  @Override
  public long size() {
    return rows;
  }

  @Override
  public Example get(long index) {
    RandomAccessDataset.checkIndex(index, rows, this);
    file.checkOpen();
    Example.Builder b = Example.builder(index);
    MappedReads.runAtRow(file.resource(), index, () -> {
      for (FieldReader r : readers) {
        b.put(r.spec().name(), r.row(index));
      }
    });
    return b.build();
  }

  @Override
  public void gather(long[] indices, int from, int count, BatchBuilder target) {
    file.checkOpen();
    for (int i = from; i < from + count; i++) {
      MappedRows.checkRows(indices[i], 1, rows, file.resource());
    }
    int start = target.size();
    boolean oneRun = MappedRows.isOneRun(indices, from, count);
    MappedReads.Action copy = () -> {
      for (int f = 0; f < readers.size(); f++) {
        FieldReader r = readers.get(f);
        if (r.isString()) {
          for (int i = from; i < from + count; i++) {
            target.appendVariable(f, r.stringBytes(indices[i]));
          }
        } else {
          r.copy(indices, from, count, target.fixedColumn(f), start, oneRun);
        }
      }
    };
    if (count == 0) {
      MappedReads.run(file.resource(), null, copy);
    } else {
      MappedReads.runAtRows(file.resource(), indices[from], copy);
    }
    if (oneRun) {
      target.commitRange(indices[from], count);
    } else {
      target.commitRows(indices, from, count);
    }
  }

  @Override
  public String toString() {
    return "hdf5(" + file.path() + ", rows=" + rows + ", fields=" + schema + ")";
  }
}
