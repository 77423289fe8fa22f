package dev.sluice.io.hdf5.internal;

import dev.sluice.core.DType;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.internal.Fingerprints;
import io.jhdf.HdfFile;
import io.jhdf.api.Attribute;
import io.jhdf.api.Dataset;
import io.jhdf.api.Link;
import io.jhdf.api.Node;
import io.jhdf.api.dataset.ChunkedDataset;
import io.jhdf.api.dataset.ContiguousDataset;
import io.jhdf.dataset.DatasetBase;
import io.jhdf.object.datatype.ArrayDataType;
import io.jhdf.object.datatype.CompoundDataType;
import io.jhdf.object.datatype.DataType;
import io.jhdf.object.datatype.EnumDataType;
import io.jhdf.object.datatype.FixedPoint;
import io.jhdf.object.datatype.FloatingPoint;
import io.jhdf.object.datatype.StringData;
import io.jhdf.object.datatype.VariableLength;
import io.jhdf.object.message.DataLayout;
import java.io.IOException;
import java.lang.reflect.Array;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An open HDF5 file and the datasets chosen from it as the fields of one dataset: jhdf reads the
 * file's structure; this class checks what Sluice can deliver (dtypes, layouts, filters, equal
 * first dimensions) and turns every refusal and every jhdf failure into a
 * {@link DatasetFormatException} naming the file and the dataset.
 */
public final class Hdf5File implements AutoCloseable {
  /** The attributes netCDF-4 uses for its own bookkeeping (dimension ids, references): not metadata. */
  private static final Set<String> BOOKKEEPING = Set.of("DIMENSION_LIST", "REFERENCE_LIST", "_Netcdf4Dimid",
      "_Netcdf4Coordinates", "_nc3_strict");
  private static final String NETCDF_DIMENSION_ONLY = "This is a netCDF dimension but not a netCDF variable";

  private final Path path;
  private final String resource;
  private final HdfFile hdf;
  private final FileChannel channel;
  private final List<Hdf5Field> fields;
  private final long rows;
  private final Map<String, Map<String, Object>> attributes;
  private volatile boolean closed;
  private volatile Path tempCopy; // deleted on close; null for a file the user named
  private volatile String sourceFingerprint; // the remote file's, for a temporary copy

  private Hdf5File(Path path, String resource, HdfFile hdf, FileChannel channel, List<Hdf5Field> fields, long rows,
      Map<String, Map<String, Object>> attributes) {
    this.path = path;
    this.resource = resource;
    this.hdf = hdf;
    this.channel = channel;
    this.fields = fields;
    this.rows = rows;
    this.attributes = attributes;
  }

  /**
   * Opens {@code path} and resolves {@code datasetPaths} (every top-level dataset when empty).
   *
   * @throws DatasetIOException when the file is missing or unreadable
   * @throws DatasetFormatException for a file jhdf cannot read, a missing dataset, unequal first
   *     dimensions; {@link UnsupportedFormatException} for a feature Sluice does not read
   */
  public static Hdf5File open(Path path, List<String> datasetPaths) {
    return open(path, path.toString(), datasetPaths);
  }

  /**
   * {@link #open(Path, List)} naming the file {@code resource} in messages (a remote URI whose
   * local copy {@code path} is).
   */
  public static Hdf5File open(Path path, String resource, List<String> datasetPaths) {
    if (!Files.exists(path)) {
      throw new DatasetIOException(resource, "no such file", null);
    }
    if (Files.isDirectory(path)) {
      throw new DatasetFormatException(resource, null, "is a directory, not an HDF5 file");
    }
    FileChannel channel;
    try {
      channel = FileChannel.open(path, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw new DatasetIOException(resource, "no such file", e);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot open: " + e, e);
    }
    HdfFile hdf = null;
    try {
      long fileSize = channel.size();
      checkNotNetcdf3(resource, channel);
      try {
        hdf = new HdfFile(path);
      } catch (RuntimeException e) {
        throw new DatasetFormatException(resource, null, "not a readable HDF5 file: " + describe(e), e);
      }
      List<Dataset> chosen = choose(resource, hdf, datasetPaths);
      List<Hdf5Field> fields = new ArrayList<>();
      for (Dataset d : chosen) {
        fields.add(field(resource, hdf, d, fileSize));
      }
      long rows = checkRows(resource, fields, datasetPaths.isEmpty());
      checkNames(resource, fields);
      Map<String, Map<String, Object>> attrs = new LinkedHashMap<>();
      putAttributes(attrs, "/", hdf);
      for (Dataset d : chosen) {
        putAttributes(attrs, d.getPath(), d);
      }
      return new Hdf5File(path, resource, hdf, channel, List.copyOf(fields), rows, Collections.unmodifiableMap(attrs));
    } catch (IOException e) {
      closeQuietly(hdf, channel);
      throw new DatasetIOException(resource, "cannot read: " + e, e);
    } catch (RuntimeException | Error e) {
      closeQuietly(hdf, channel);
      throw e;
    }
  }

  /** netCDF-3 ("classic") files start with {@code CDF} and a version byte 1, 2 or 5; they are not HDF5. */
  private static void checkNotNetcdf3(String resource, FileChannel channel) throws IOException {
    ByteBuffer head = ByteBuffer.allocate(4);
    while (head.hasRemaining() && channel.read(head, head.position()) > 0) {
      // a positioned read may return fewer bytes
    }
    byte v = head.get(3);
    if (!head.hasRemaining() && head.get(0) == 'C' && head.get(1) == 'D' && head.get(2) == 'F'
        && (v == 1 || v == 2 || v == 5)) {
      throw new UnsupportedFormatException(resource, null, "is a netCDF-3 (classic) file, which Sluice does not"
          + " read; only netCDF-4 files are HDF5 (convert with nccopy -k nc4)");
    }
  }

  private static void closeQuietly(HdfFile hdf, FileChannel channel) {
    try {
      if (hdf != null) {
        hdf.close();
      }
    } catch (RuntimeException ignored) {
      // the open already failed; that error is the one to report
    }
    try {
      channel.close();
    } catch (IOException ignored) {
      // as above
    }
  }

  /** jhdf's message, with its cause's where that says more. */
  static String describe(Throwable e) {
    String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    Throwable c = e.getCause();
    if (c != null && c != e && c.getMessage() != null && !m.contains(c.getMessage())) {
      m += " (" + c.getMessage() + ")";
    }
    return m;
  }

  private static List<Dataset> choose(String resource, HdfFile hdf, List<String> datasetPaths) {
    List<Dataset> out = new ArrayList<>();
    if (datasetPaths.isEmpty()) {
      Map<String, Node> children;
      try {
        children = hdf.getChildren();
      } catch (RuntimeException e) {
        throw groupFailure(resource, e);
      }
      for (Node n : children.values()) {
        Node target = resolve(resource, n);
        if (target instanceof Dataset d && !isNetcdfDimensionOnly(d)) {
          out.add(d);
        }
      }
      if (out.isEmpty()) {
        throw new DatasetFormatException(resource, null, "holds no datasets at the top level (its groups: "
            + children.keySet() + "); name the datasets to read by path, e.g. /group/x");
      }
      return out;
    }
    for (String p : datasetPaths) {
      String abs = p.startsWith("/") ? p : "/" + p;
      Node n;
      try {
        n = resolve(resource, hdf.getByPath(abs));
      } catch (DatasetFormatException e) {
        throw e;
      } catch (io.jhdf.exceptions.HdfInvalidPathException e) {
        throw new DatasetFormatException(resource, abs, "no such dataset; top-level datasets are "
            + topLevelDatasets(hdf), e);
      } catch (RuntimeException e) {
        throw groupFailure(resource, e);
      }
      if (!(n instanceof Dataset d)) {
        throw new DatasetFormatException(resource, abs, "is a group, not a dataset; its members are "
            + ((io.jhdf.api.Group) n).getChildren().keySet());
      }
      if (out.stream().anyMatch(o -> o.getPath().equals(d.getPath()))) {
        throw new IllegalArgumentException("dataset " + abs + " is named twice");
      }
      out.add(d);
    }
    return out;
  }

  /**
   * jhdf reads every member's object header when it first lists a group, so one member using a
   * feature it does not read (external storage, an unknown message) fails the whole group: the
   * error names the feature and where jhdf met it.
   */
  private static DatasetFormatException groupFailure(String resource, RuntimeException e) {
    StringBuilder where = new StringBuilder();
    for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
      if (t instanceof io.jhdf.exceptions.UnsupportedHdfException u) {
        String m = String.valueOf(u.getMessage());
        String feature = m.contains("External Data Files") ? "a dataset with external storage (data in another file)"
            : m.contains("irtual") ? "a virtual dataset" : "an object jhdf cannot read";
        return new UnsupportedFormatException(resource, null, "holds " + feature
            + ", which Sluice does not read (jhdf: " + m + where + ")", e);
      }
      String m = t.getMessage();
      if (m != null && m.startsWith("Failed to read object header at address")) {
        where.append("; object header at address ").append(m.substring(m.lastIndexOf(' ') + 1));
      }
    }
    return new DatasetFormatException(resource, null, "cannot read its groups (a truncated or damaged file?): "
        + describe(e), e);
  }

  private static List<String> topLevelDatasets(HdfFile hdf) {
    List<String> out = new ArrayList<>();
    try {
      for (Node n : hdf.getChildren().values()) {
        if (!n.isGroup()) {
          out.add("/" + n.getName());
        }
      }
    } catch (RuntimeException ignored) {
      // only for a message
    }
    return out;
  }

  private static Node resolve(String resource, Node n) {
    if (n instanceof Link l) {
      if (l.isBrokenLink()) {
        throw new DatasetFormatException(resource, n.getPath(), "is a broken link to " + l.getTargetPath());
      }
      try {
        return l.getTarget();
      } catch (RuntimeException e) {
        throw new UnsupportedFormatException(resource, n.getPath(), "is a link Sluice cannot follow ("
            + describe(e) + ")", e);
      }
    }
    return n;
  }

  private static boolean isNetcdfDimensionOnly(Dataset d) {
    try {
      Attribute name = d.getAttribute("NAME");
      return name != null && String.valueOf(name.getData()).startsWith(NETCDF_DIMENSION_ONLY);
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static Hdf5Field field(String resource, HdfFile hdf, Dataset d, long fileSize) {
    String where = "dataset " + d.getPath();
    try {
      return field0(resource, hdf, d, fileSize, where);
    } catch (DatasetFormatException | IllegalArgumentException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new DatasetFormatException(resource, where, "cannot read its description: " + describe(e), e);
    }
  }

  private static Hdf5Field field0(String resource, HdfFile hdf, Dataset d, long fileSize, String where) {
    DataLayout layout = d.getDataLayout();
    if (d.isScalar() || d.getDimensionsAsLong().length == 0) {
      throw new DatasetFormatException(resource, where, "is a scalar (rank 0); only datasets with a first dimension"
          + " become fields (scalars are read as metadata only when stored as attributes)");
    }
    if (!(d instanceof DatasetBase base)) {
      throw new UnsupportedFormatException(resource, where, "is a kind of dataset jhdf does not expose ("
          + d.getClass().getSimpleName() + ")");
    }
    long[] dims = d.getDimensionsAsLong();
    long rows = dims[0];
    Shape rowShape = Shape.of(Arrays.copyOfRange(dims, 1, dims.length));
    DataType type = d.getDataType();
    boolean string = type instanceof StringData
        || (type instanceof VariableLength vl && vl.isVariableLengthString());
    if (string) {
      if (dims.length != 1) {
        throw new UnsupportedFormatException(resource, where, "is a string dataset of shape " + Arrays.toString(dims)
            + "; only one-dimensional string datasets (one string per row) are read");
      }
      String[] values = strings(resource, where, d, rows);
      return new Hdf5Field(d.getPath(), new TensorSpec(d.getName(), DType.STRING, Shape.scalar()), rows, false,
          Hdf5Field.Storage.STRINGS, -1, 0, values, base);
    }
    DType dtype = dtype(resource, where, type);
    boolean bigEndian = dtype.byteSize() > 1 && type instanceof FixedPoint fp
        ? fp.getByteOrder() == ByteOrder.BIG_ENDIAN
        : type instanceof FloatingPoint f && f.getByteOrder() == ByteOrder.BIG_ENDIAN && dtype.byteSize() > 1;
    TensorSpec spec = new TensorSpec(d.getName(), dtype, rowShape);
    long dataBytes = Math.multiplyExact(rows, spec.rowBytes());
    if (d instanceof ContiguousDataset c) {
      long address = c.getDataAddress();
      if (address == -1L) {
        if (dataBytes == 0) {
          return new Hdf5Field(d.getPath(), spec, rows, bigEndian, Hdf5Field.Storage.CONTIGUOUS, 0, 0, null, base);
        }
        throw new UnsupportedFormatException(resource, where, "has contiguous data with no address in the file"
            + " (external storage, or data never written), which Sluice does not read");
      }
      long offset = address + hdf.getUserBlockSize();
      if (offset < 0 || offset + dataBytes > fileSize) {
        throw new DatasetFormatException(resource, where, "truncated: its " + dataBytes + " bytes of data at byte "
            + offset + " end at byte " + (offset + dataBytes) + " but the file has " + fileSize + " bytes");
      }
      return new Hdf5Field(d.getPath(), spec, rows, bigEndian, Hdf5Field.Storage.CONTIGUOUS, offset, 0, null, base);
    }
    if (d instanceof ChunkedDataset ch) {
      try {
        ch.getFilters(); // builds the filter pipeline: an unknown filter fails here, not mid-epoch
      } catch (RuntimeException e) {
        throw new UnsupportedFormatException(resource, where, "uses a filter Sluice cannot decode: " + describe(e), e);
      }
      if (dataBytes > 0 && spec.rowBytes() * ch.getChunkDimensions()[0] > Integer.MAX_VALUE) {
        throw new UnsupportedFormatException(resource, where, "has chunks of " + ch.getChunkDimensions()[0]
            + " rows of " + spec.rowBytes() + " bytes, more than one read holds (" + Integer.MAX_VALUE + " bytes)");
      }
      return new Hdf5Field(d.getPath(), spec, rows, bigEndian, Hdf5Field.Storage.CHUNKED, -1,
          ch.getChunkDimensions()[0], null, base);
    }
    if (layout == DataLayout.COMPACT) {
      return new Hdf5Field(d.getPath(), spec, rows, bigEndian, Hdf5Field.Storage.COMPACT, -1, 0, null, base);
    }
    throw new UnsupportedFormatException(resource, where, "has data layout " + layout + ", which Sluice does not read");
  }

  private static DType dtype(String resource, String where, DataType type) {
    if (type instanceof FixedPoint fp) {
      int size = fp.getSize();
      if (fp.getBitOffset() != 0 || fp.getBitPrecision() != size * 8) {
        throw new UnsupportedFormatException(resource, where, "holds " + fp.getBitPrecision() + "-bit integers at bit "
            + fp.getBitOffset() + " of " + size + "-byte values, which Sluice does not read");
      }
      return switch (size) {
        case 1 -> fp.isSigned() ? DType.INT8 : DType.UINT8;
        case 2 -> fp.isSigned() ? DType.INT16 : DType.UINT16;
        case 4 -> fp.isSigned() ? DType.INT32 : DType.UINT32;
        case 8 -> fp.isSigned() ? DType.INT64 : DType.UINT64;
        default -> throw new UnsupportedFormatException(resource, where, "holds " + size + "-byte integers, which Sluice"
            + " does not read");
      };
    }
    if (type instanceof FloatingPoint f) {
      return switch (f.getSize()) {
        case 2 -> DType.FLOAT16;
        case 4 -> DType.FLOAT32;
        case 8 -> DType.FLOAT64;
        default -> throw new UnsupportedFormatException(resource, where, "holds " + f.getSize() + "-byte floats, which"
            + " Sluice does not read");
      };
    }
    if (type instanceof EnumDataType e && e.getBaseType() instanceof FixedPoint base && base.getSize() == 1
        && Map.of(0, "FALSE", 1, "TRUE").equals(e.getEnumMapping())) {
      return DType.BOOL; // how h5py stores numpy's bool
    }
    String what;
    if (type instanceof CompoundDataType) {
      what = "a compound datatype";
    } else if (type instanceof VariableLength) {
      what = "variable-length sequences";
    } else if (type instanceof ArrayDataType) {
      what = "an array datatype";
    } else if (type instanceof EnumDataType) {
      what = "an enum datatype";
    } else {
      what = "datatype class " + type.getDataClass() + " (" + type.getClass().getSimpleName() + ")";
    }
    throw new UnsupportedFormatException(resource, where, "holds " + what + ", which Sluice does not read");
  }

  private static String[] strings(String resource, String where, Dataset d, long rows) {
    Object data;
    try {
      data = d.getData();
    } catch (RuntimeException e) {
      throw new DatasetFormatException(resource, where, "cannot read its strings: " + describe(e), e);
    }
    if (data == null || !data.getClass().isArray() || Array.getLength(data) != rows) {
      throw new DatasetFormatException(resource, where, "expected " + rows + " strings but jhdf read "
          + (data == null ? "none" : data.getClass().getSimpleName()));
    }
    String[] out = new String[(int) rows];
    for (int i = 0; i < out.length; i++) {
      Object v = Array.get(data, i);
      out[i] = v == null ? "" : v.toString();
    }
    return out;
  }

  private static long checkRows(String resource, List<Hdf5Field> fields, boolean byDefault) {
    long rows = fields.get(0).rows();
    for (Hdf5Field f : fields) {
      if (f.rows() != rows) {
        StringBuilder sb = new StringBuilder(byDefault ? "its top-level datasets" : "the chosen datasets")
            .append(" do not share their first dimension (");
        for (int i = 0; i < fields.size(); i++) {
          sb.append(i == 0 ? "" : ", ").append(fields.get(i).hdfPath()).append(": ").append(fields.get(i).rows());
        }
        sb.append("); choose datasets of one length by path (Hdf5.open(file, \"")
            .append(fields.get(0).hdfPath()).append("\"), or --columns ").append(fields.get(0).spec().name())
            .append(" on the command line)");
        throw new DatasetFormatException(resource, null, sb.toString());
      }
    }
    return rows;
  }

  private static void checkNames(String resource, List<Hdf5Field> fields) {
    Map<String, String> seen = new LinkedHashMap<>();
    for (Hdf5Field f : fields) {
      String prev = seen.put(f.spec().name(), f.hdfPath());
      if (prev != null) {
        throw new DatasetFormatException(resource, null, "datasets " + prev + " and " + f.hdfPath()
            + " would both be field '" + f.spec().name() + "'; choose datasets with distinct names");
      }
    }
  }

  private static void putAttributes(Map<String, Map<String, Object>> out, String object, Node node) {
    Map<String, Object> m = new LinkedHashMap<>();
    Map<String, Attribute> attrs;
    try {
      attrs = node.getAttributes();
    } catch (RuntimeException e) {
      return; // attributes are metadata: one jhdf cannot read does not block the data
    }
    for (Map.Entry<String, Attribute> a : attrs.entrySet()) {
      if (BOOKKEEPING.contains(a.getKey())) {
        continue;
      }
      try {
        m.put(a.getKey(), plain(a.getValue().getData()));
      } catch (RuntimeException e) {
        // as above: an attribute of a type jhdf cannot read is left out
      }
    }
    if (!m.isEmpty()) {
      out.put(object, Collections.unmodifiableMap(m));
    }
  }

  /** A value of JSON's kinds: strings, numbers, booleans and lists of them. */
  private static Object plain(Object v) {
    if (v == null || v instanceof String || v instanceof Number || v instanceof Boolean) {
      return v;
    }
    if (v.getClass().isArray()) {
      int n = Array.getLength(v);
      List<Object> list = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        list.add(plain(Array.get(v, i)));
      }
      return Collections.unmodifiableList(list);
    }
    if (v instanceof ByteBuffer b) {
      return StandardCharsets.ISO_8859_1.decode(b.duplicate()).toString();
    }
    return v.toString();
  }

  /** The file. */
  public Path path() {
    return path;
  }

  /** The file, for messages. */
  public String resource() {
    return resource;
  }

  /** The fields, in the order chosen. */
  List<Hdf5Field> fields() {
    return fields;
  }

  /** The shared first dimension. */
  public long rows() {
    return rows;
  }

  /** True when every field can be read at any row at the same cost (no chunked field). */
  public boolean isRandomAccess() {
    return fields.stream().noneMatch(f -> f.storage() == Hdf5Field.Storage.CHUNKED);
  }

  /** Attributes by object path ({@code "/"} for the file). */
  public Map<String, Map<String, Object>> attributes() {
    return attributes;
  }

  FileChannel channel() {
    return channel;
  }

  void checkOpen() {
    if (closed) {
      throw new DatasetClosedException(resource);
    }
  }

  /** The file's size and modification time, the chosen datasets and the schema. */
  String fingerprint(dev.sluice.core.Schema schema) {
    StringBuilder sb = new StringBuilder("hdf5\n")
        .append(sourceFingerprint != null ? sourceFingerprint : Fingerprints.file(path));
    for (Hdf5Field f : fields) {
      sb.append(f.hdfPath()).append('\n');
    }
    return sb.append(Fingerprints.schema(schema)).toString();
  }

  /** Closes jhdf's file and the mapping's channel; mappings stay until the GC drops their last view. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      hdf.close();
    } catch (RuntimeException e) {
      closeChannel(e);
      deleteCopy();
      throw new DatasetIOException(resource, "cannot close: " + describe(e), e);
    }
    try {
      closeChannel(null);
    } finally {
      deleteCopy();
    }
  }

  /**
   * Makes this file a temporary local copy of a remote one: {@link #close()} deletes {@code copy},
   * and the fingerprint names the remote file ({@code sourceFingerprint}) instead of the copy.
   */
  public void deleteOnClose(Path copy, String sourceFingerprint) {
    this.sourceFingerprint = sourceFingerprint;
    this.tempCopy = copy;
  }

  private void deleteCopy() {
    Path copy = tempCopy;
    if (copy != null) {
      try {
        Files.deleteIfExists(copy);
      } catch (IOException e) {
        throw new DatasetIOException(copy.toString(), "cannot delete the temporary copy of " + resource + ": " + e, e);
      }
    }
  }

  private void closeChannel(RuntimeException earlier) {
    try {
      channel.close();
    } catch (IOException e) {
      if (earlier == null) {
        throw new DatasetIOException(resource, "cannot close: " + e, e);
      }
    }
  }
}
