package dev.sluice.io.hdf5.internal;

import dev.sluice.core.Schema;
import dev.sluice.core.TensorSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What both kinds of HDF5 dataset share: the file, its field readers and the schema. */
abstract class Hdf5Fields {
  final Hdf5File file;
  final List<FieldReader> readers;
  final Schema schema;
  final long rows;

  Hdf5Fields(Hdf5File file, long maxChunkBytes) {
    this.file = file;
    List<FieldReader> r = new ArrayList<>();
    List<TensorSpec> specs = new ArrayList<>();
    for (Hdf5Field f : file.fields()) {
      r.add(new FieldReader(file, f, maxChunkBytes));
      specs.add(f.spec());
    }
    this.readers = List.copyOf(r);
    this.schema = Schema.of(specs);
    this.rows = file.rows();
  }

  public java.nio.file.Path path() {
    return file.path();
  }

  public Schema schema() {
    return schema;
  }

  public List<String> datasetPaths() {
    return file.fields().stream().map(Hdf5Field::hdfPath).toList();
  }

  public Map<String, Map<String, Object>> attributes() {
    return file.attributes();
  }

  public String fingerprint() {
    return file.fingerprint(schema);
  }

  public void close() {
    file.close();
  }
}
