package dev.sluice.io.npy.internal;

import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Example;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.Fingerprints;
import dev.sluice.core.internal.Resources;
import dev.sluice.core.internal.mapped.MappedReads;
import dev.sluice.core.IoMode;
import dev.sluice.core.internal.mapped.MappedRows;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.io.internal.RemoteInput;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** One {@code .npy} file, or several aligned files read as one dataset (fields in file-name order). */
public final class AlignedNpyDataset implements NpyDataset {
  private final Path path; // null when opened from a remote URI
  private final String location;
  private final List<NpyArrayReader> arrays;
  private final int[] fieldBase;
  private final Schema schema;
  private final long rows;

  private AlignedNpyDataset(Path path, List<NpyArrayReader> arrays) {
    this(path, path.toString(), arrays);
  }

  private AlignedNpyDataset(Path path, String location, List<NpyArrayReader> arrays) {
    this.path = path;
    this.location = location;
    this.arrays = arrays;
    this.fieldBase = new int[arrays.size()];
    List<TensorSpec> specs = new ArrayList<>();
    Map<String, String> owner = new HashMap<>();
    long n = -1;
    NpyArrayReader first = null;
    for (int a = 0; a < arrays.size(); a++) {
      NpyArrayReader r = arrays.get(a);
      fieldBase[a] = specs.size();
      for (TensorSpec s : r.specs()) {
        String prev = owner.put(s.name(), r.resource());
        if (prev != null) {
          throw new DatasetFormatException(r.resource(), null,
              "field '" + s.name() + "' is also a field of " + prev + "; field names must be unique");
        }
        specs.add(s);
      }
      if (first != null && r.rows() != n) {
        throw new DatasetFormatException(r.resource(), null, "has " + r.rows() + " rows but " + first.resource()
            + " has " + n + "; aligned arrays must have the same number of rows");
      }
      if (first == null) {
        first = r;
        n = r.rows();
      }
    }
    this.schema = Schema.of(specs);
    this.rows = n;
  }

  /** Opens one file ({@code field} names its field when its dtype is not structured). */
  public static AlignedNpyDataset openFile(Path file, String field, long maxChunkBytes) {
    return openFile(file, field, maxChunkBytes, IoMode.MMAP);
  }

  /** Opens one file, read in {@code mode}. */
  public static AlignedNpyDataset openFile(Path file, String field, long maxChunkBytes, IoMode mode) {
    return new AlignedNpyDataset(file, List.of(NpyArrayReader.open(file, field, maxChunkBytes, mode)));
  }

  /** Opens aligned files (in the given order, each field named after its file). */
  public static AlignedNpyDataset openAligned(Path dir, List<Path> files, long maxChunkBytes) {
    return openAligned(dir, files, maxChunkBytes, IoMode.MMAP);
  }

  /** Opens aligned files, read in {@code mode}. */
  public static AlignedNpyDataset openAligned(Path dir, List<Path> files, long maxChunkBytes, IoMode mode) {
    List<NpyArrayReader> readers = new ArrayList<>();
    try {
      for (Path f : files) {
        readers.add(NpyArrayReader.open(f, NpyLayout.stem(f), maxChunkBytes, mode));
      }
      return new AlignedNpyDataset(dir, List.copyOf(readers));
    } catch (RuntimeException e) {
      Resources.closeAfter(e, readers);
      throw e;
    }
  }

  /**
   * Opens remote files (one, or aligned files in the given order, each field named after its file;
   * for one file, {@code field} names its field) read with positioned reads; closes them all when
   * the open fails.
   *
   * @param location the URI the user named, for messages
   */
  public static AlignedNpyDataset openRemote(String location, List<RemoteInput> files, String field,
      long maxChunkBytes) {
    List<NpyArrayReader> readers = new ArrayList<>();
    int opened = 0;
    try {
      for (RemoteInput f : files) {
        opened++;
        String name = field != null ? field : NpyLayout.stem(f.resource());
        readers.add(NpyArrayReader.open(f, f, f.fingerprint(), name, maxChunkBytes));
      }
      return new AlignedNpyDataset(null, location, List.copyOf(readers));
    } catch (RuntimeException e) {
      Resources.closeAfter(e, readers);
      Resources.closeAfter(e, files.subList(opened, files.size()));
      throw e;
    }
  }

  @Override
  public Path path() {
    return path;
  }

  @Override
  public String location() {
    return location;
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public long size() {
    return rows;
  }

  @Override
  public Example get(long index) {
    RandomAccessDataset.checkIndex(index, rows, this);
    Example.Builder fields = Example.builder(index);
    for (NpyArrayReader r : arrays) {
      MappedReads.runAtRow(r.resource(), index, () -> r.putRow(index, fields));
    }
    return fields.build();
  }

  @Override
  public void gather(long[] indices, int from, int count, BatchBuilder target) {
    int start = target.size(); // copyRows checks the indices of each run
    // an in-order batch (one run of rows, checked in bounds) is one bulk copy per array and a batch
    // without an index array
    boolean oneRun = MappedRows.isOneRun(indices, from, count)
        && indices[from] >= 0 && indices[from] + count <= rows;
    for (int a = 0; a < arrays.size(); a++) {
      NpyArrayReader r = arrays.get(a);
      int base = fieldBase[a];
      if (count == 0) {
        MappedReads.run(r.resource(), null, () -> r.copyRows(indices, from, 0, 0, target, base, start, oneRun));
      } else {
        MappedReads.runAtRows(r.resource(), indices[from],
            () -> r.copyRows(indices, from, count, 0, target, base, start, oneRun));
      }
    }
    if (oneRun) {
      target.commitRange(indices[from], count);
    } else {
      target.commitRows(indices, from, count);
    }
  }

  @Override
  public void close() {
    NpyArrayReader.closeAll(arrays);
  }

  /** Its arrays' files (path, size, modification time) and its schema. */
  @Override
  public String fingerprint() {
    StringBuilder sb = new StringBuilder("npy\n");
    for (NpyArrayReader a : arrays) {
      sb.append(a.fingerprint());
    }
    return sb.append(Fingerprints.schema(schema)).toString();
  }

  @Override
  public String toString() {
    return "npy(" + location + ", rows=" + rows + ", fields=" + schema + ")";
  }
}
