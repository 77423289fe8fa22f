package dev.sluice.io.internal.hadoop;

import dev.sluice.core.DatasetIOException;
import dev.sluice.io.internal.JsonFiles;
import dev.sluice.io.internal.RemoteFiles;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.apache.hadoop.fs.CommonPathCapabilities;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * Puts a local dataset in place on an object store (S3A and any Hadoop {@code FileSystem} whose
 * files appear only when their output stream closes and whose streams can be aborted) without a
 * rename, which on such a store is a copy and a delete per object.
 *
 * <ul>
 *   <li>A file is written straight to its final name in one upload: readers see the old object or
 *       the new one. A failed upload is aborted and publishes nothing.
 *   <li>A shard set's files are uploaded under names unique to this write
 *       ({@code shard-00000-<write id>.shard}), then its {@code metadata.json}, rewritten to name
 *       them, in one upload. Readers go by {@code metadata.json}, so they see the old set or the new
 *       one. With {@code force}, the files the old {@code metadata.json} named are deleted once the
 *       new one is in place. A failure deletes the files this write uploaded and leaves the old set
 *       as it was.
 *   <li>Any other directory's files are uploaded to their final names one by one, its
 *       {@code metadata.json} (if any) last: each file is whole, but while the write runs a reader
 *       listing the directory sees some of the new files (beside the old ones under {@code force}).
 *       With {@code force} the old files the write did not overwrite are deleted at the end.
 * </ul>
 */
final class ObjectStoreCommit {
  private static final String MANIFEST = "metadata.json";
  private static final String SHARD_SET = "sluice-shards";

  private final FileSystem fs;
  private final URI target;
  private final Path to;

  private ObjectStoreCommit(FileSystem fs, URI target) {
    this.fs = fs;
    this.target = target;
    this.to = new Path(target);
  }

  /**
   * True when files of {@code fs} under {@code dir} become visible only when their stream closes
   * ({@code fs.option.create.in.close}) and a stream can be aborted instead, publishing nothing
   * ({@code fs.capability.outputstream.abortable}): the object stores, where a rename is not atomic.
   */
  static boolean applies(FileSystem fs, Path dir) throws IOException {
    return fs.hasPathCapability(dir, Options.CreateFileOptionKeys.FS_OPTION_CREATE_IN_CLOSE)
        && fs.hasPathCapability(dir, CommonPathCapabilities.ABORTABLE_STREAM);
  }

  /** Publishes {@code local} at {@code target} on {@code fs}, as the class describes. */
  static void publish(FileSystem fs, java.nio.file.Path local, URI target, boolean force) {
    new ObjectStoreCommit(fs, target).run(local, force);
  }

  private void run(java.nio.file.Path local, boolean force) {
    List<Path> uploaded = new ArrayList<>();
    boolean committed = false;
    try {
      FileStatus old = status(to);
      if (old != null && !force) {
        throw new DatasetIOException(target.toString(), "already exists; pass --force to replace it", null);
      }
      boolean directory = Files.isDirectory(local);
      if (old != null && old.isDirectory() != directory) {
        // a file cannot stand where a directory of objects is, nor the reverse
        if (!fs.delete(to, true)) {
          throw new IOException("cannot delete the existing " + to);
        }
        old = null;
      }
      if (!directory) {
        put(local, to, force);
        committed = true;
        return;
      }
      Set<Path> replaced = old == null ? Set.of() : oldFiles();
      java.nio.file.Path manifest = local.resolve(MANIFEST);
      ObjectNode shardSet = Files.isRegularFile(manifest)
          ? shardSet(manifest.toString(), Files.readAllBytes(manifest)) : null;
      Set<Path> written = new HashSet<>();
      if (shardSet != null) {
        String id = writeId();
        for (JsonNode entry : shardSet.get("shards")) {
          String name = entry.get("file").asText();
          Path dst = new Path(to, unique(name, id));
          put(local.resolve(name), dst, false);
          uploaded.add(dst);
          ((ObjectNode) entry).put("file", dst.getName());
        }
        Path m = new Path(to, MANIFEST);
        put(json(shardSet), m, force);
        committed = true;
        written.addAll(uploaded);
        written.add(m);
      } else {
        for (Map.Entry<java.nio.file.Path, Path> e : files(local).entrySet()) {
          put(e.getKey(), e.getValue(), force);
          written.add(e.getValue());
        }
        committed = true;
      }
      for (Path p : replaced) {
        if (!written.contains(p)) {
          fs.delete(p, false);
        }
      }
    } catch (IOException | RuntimeException e) {
      if (!committed) {
        for (Path p : uploaded) {
          try {
            fs.delete(p, false);
          } catch (IOException suppressed) {
            e.addSuppressed(suppressed);
          }
        }
      }
      if (e instanceof RuntimeException r) {
        throw r;
      }
      throw new DatasetIOException(target.toString(), (committed ? "written, but removing the files of the dataset it"
          + " replaced failed: " : "write failed: ") + RemoteFiles.scrub(e.getMessage()), e);
    }
  }

  /**
   * The files of the dataset at {@code to} that a forced write replaces: those its
   * {@code metadata.json} names when it is a shard set, else every file under it.
   */
  private Set<Path> oldFiles() throws IOException {
    Set<Path> out = new HashSet<>();
    Path m = new Path(to, MANIFEST);
    FileStatus ms = status(m);
    if (ms != null && ms.isFile()) {
      byte[] bytes;
      try (FSDataInputStream in = fs.open(m)) {
        bytes = in.readAllBytes();
      }
      ObjectNode meta = shardSet(m.toUri().toString(), bytes);
      if (meta != null) {
        for (JsonNode entry : meta.get("shards")) {
          out.add(new Path(to, entry.get("file").asText()));
        }
        return out;
      }
    }
    RemoteIterator<LocatedFileStatus> it = fs.listFiles(to, true);
    while (it.hasNext()) {
      out.add(fs.makeQualified(it.next().getPath()));
    }
    return out;
  }

  /**
   * The {@code metadata.json} {@code bytes} when they describe a shard set: a JSON object with
   * {@code "format": "sluice-shards"} and a {@code shards} array whose entries name their files
   * ({@code file}, a name in the directory); null for anything else, a damaged one included (that
   * directory is then treated as one without a manifest).
   */
  static ObjectNode shardSet(String resource, byte[] bytes) {
    JsonNode root;
    try {
      root = JsonFiles.readObject(resource, bytes);
    } catch (RuntimeException damaged) {
      return null;
    }
    JsonNode shards = root.get("shards");
    if (!SHARD_SET.equals(root.path("format").asText(null)) || shards == null || !shards.isArray()) {
      return null;
    }
    for (JsonNode entry : shards) {
      JsonNode file = entry.get("file");
      if (!entry.isObject() || file == null || !file.isTextual() || file.asText().isEmpty()
          || file.asText().contains("/") || file.asText().startsWith(".")) {
        return null;
      }
    }
    return (ObjectNode) root;
  }

  /** {@code manifest} as the shard writer lays it out: two-space indents, LF line ends, a final LF. */
  private static byte[] json(ObjectNode manifest) throws IOException {
    DefaultPrettyPrinter pretty = new DefaultPrettyPrinter().withObjectIndenter(new DefaultIndenter("  ", "\n"));
    String text = new ObjectMapper().writer(pretty).writeValueAsString(manifest);
    return (text + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /** The files of local directory {@code dir} and where each goes, {@code metadata.json} last. */
  private Map<java.nio.file.Path, Path> files(java.nio.file.Path dir) throws IOException {
    List<java.nio.file.Path> files;
    try (Stream<java.nio.file.Path> all = Files.walk(dir)) {
      files = all.filter(Files::isRegularFile)
          .sorted(Comparator.comparing((java.nio.file.Path f) -> f.getFileName().toString().equals(MANIFEST))
              .thenComparing(java.nio.file.Path::toString))
          .toList();
    }
    Map<java.nio.file.Path, Path> out = new LinkedHashMap<>();
    for (java.nio.file.Path f : files) {
      out.put(f, fs.makeQualified(new Path(to, dir.relativize(f).toString().replace(java.io.File.separatorChar, '/'))));
    }
    return out;
  }

  /** The status of {@code p}, or null when nothing is there. */
  private FileStatus status(Path p) throws IOException {
    try {
      return fs.getFileStatus(p);
    } catch (FileNotFoundException e) {
      return null;
    }
  }

  private void put(java.nio.file.Path from, Path dst, boolean overwrite) throws IOException {
    try (InputStream in = Files.newInputStream(from)) {
      put(in, dst, overwrite);
    }
  }

  private void put(byte[] bytes, Path dst, boolean overwrite) throws IOException {
    put(new ByteArrayInputStream(bytes), dst, overwrite);
  }

  /**
   * Uploads {@code in} to {@code dst}, visible only once complete: a failure aborts the stream, so
   * that closing it does not publish a partial object.
   */
  private void put(InputStream in, Path dst, boolean overwrite) throws IOException {
    FSDataOutputStream out = fs.create(dst, overwrite);
    try {
      in.transferTo(out);
    } catch (IOException | RuntimeException e) {
      try {
        out.abort();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    out.close();
  }

  /** {@code name} with {@code -<id>} before its extension. */
  static String unique(String name, String id) {
    int dot = name.lastIndexOf('.');
    return dot <= 0 ? name + "-" + id : name.substring(0, dot) + "-" + id + name.substring(dot);
  }

  /** A name part unique to one write: the time in seconds and 32 random bits, in hex. */
  private static String writeId() {
    return String.format(Locale.ROOT, "%x%08x", System.currentTimeMillis() / 1000,
        ThreadLocalRandom.current().nextInt());
  }
}
