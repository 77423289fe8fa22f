package dev.sluice.io.internal;

import dev.sluice.core.MissingDependencyException;
import dev.sluice.core.internal.OptionalLibrary;
import dev.sluice.io.internal.hadoop.HadoopFileSystems;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Datasets named by a URI. A URI without a scheme or with {@code file:} is a local path and keeps
 * every local behaviour (mappings by default); any other scheme ({@code hdfs://}, {@code s3a://},
 * ...) is read through Hadoop's {@code FileSystem} with positioned reads. This class names no
 * Hadoop type: Hadoop classes load only once a remote URI is opened, after
 * {@link OptionalLibrary#HADOOP} has been checked.
 */
public final class RemoteFiles {
  private static final Map<String, String> SETTINGS = new ConcurrentHashMap<>();
  private static final AtomicLong VERSION = new AtomicLong();

  private RemoteFiles() {}

  /**
   * Adds Hadoop configuration settings (the CLI's {@code --conf key=value}; later ones win) over
   * Hadoop's defaults, {@code core-site.xml} on the class path and the files of
   * {@code HADOOP_CONF_DIR}; they apply to the file systems opened from now on.
   */
  public static void configure(Map<String, String> settings) {
    SETTINGS.putAll(settings);
    VERSION.incrementAndGet();
  }

  /**
   * {@code message} with the value of every configured credential setting ({@link #masked}) replaced
   * by {@code ****}: Hadoop's messages may echo a setting.
   */
  public static String scrub(String message) {
    if (message == null) {
      return null;
    }
    String out = message;
    for (Map.Entry<String, String> e : SETTINGS.entrySet()) {
      if (!e.getValue().isEmpty() && !masked(e.getKey(), e.getValue()).equals(e.getValue())) {
        out = out.replace(e.getValue(), "****");
      }
    }
    return out;
  }

  /** The settings given to {@link #configure}. */
  public static Map<String, String> settings() {
    return Map.copyOf(SETTINGS);
  }

  /** Counts calls of {@link #configure}: a configuration built before a later call is stale. */
  public static long settingsVersion() {
    return VERSION.get();
  }

  /**
   * {@code value}, or {@code ****} when {@code key} names a credential (contains {@code secret},
   * {@code password}, {@code token} or {@code key}, in any case): what a message may show.
   */
  public static String masked(String key, String value) {
    String k = key.toLowerCase(java.util.Locale.ROOT);
    return k.contains("secret") || k.contains("password") || k.contains("token") || k.contains("key")
        ? "****" : value;
  }

  /** True when {@code uri} names a file through Hadoop rather than a local path. */
  public static boolean isRemote(URI uri) {
    return uri.getScheme() != null && !"file".equalsIgnoreCase(uri.getScheme());
  }

  /** A path or URI typed by a user: parsed as a URI when it has a scheme ({@code x://}), else null. */
  public static URI remoteUri(String pathOrUri) {
    int colon = pathOrUri.indexOf("://");
    if (colon <= 1) {
      return null;
    }
    URI u = URI.create(pathOrUri);
    return isRemote(u) ? u : null;
  }

  /** The local path of a {@code file:} URI or a scheme-less one. */
  public static Path localPath(URI uri) {
    return uri.getScheme() == null ? Path.of(uri.getPath()) : Path.of(uri);
  }

  /**
   * Returns when Hadoop's client is on the class path.
   *
   * @throws MissingDependencyException naming {@code org.apache.hadoop:hadoop-client-api} and
   *     {@code hadoop-client-runtime}
   */
  public static void requireHadoop(URI uri) {
    OptionalLibrary.HADOOP.require(uri.toString());
  }

  /**
   * Opens the remote file {@code uri} for positioned reads.
   *
   * @throws MissingDependencyException when Hadoop is not on the class path
   * @throws dev.sluice.core.DatasetIOException when the file cannot be opened
   */
  public static RemoteInput open(URI uri) {
    requireHadoop(uri);
    return HadoopFileSystems.open(uri);
  }

  /** True when {@code uri} names a directory. */
  public static boolean isDirectory(URI uri) {
    requireHadoop(uri);
    return HadoopFileSystems.isDirectory(uri);
  }

  /** The regular files directly inside directory {@code uri}, in name order. */
  public static List<URI> list(URI uri) {
    requireHadoop(uri);
    return HadoopFileSystems.list(uri);
  }

  /**
   * Copies a dataset written locally to the remote {@code target} so that a reader never sees a
   * half-written dataset: on an object store ({@code s3a://}) without a rename (a file in one
   * upload, a shard set's files under names unique to the write and then its {@code metadata.json}),
   * elsewhere under a temporary name renamed into place (see {@code HadoopFileSystems.publish}).
   *
   * @param force replace an existing target; without it an existing target is refused
   * @throws MissingDependencyException when Hadoop is not on the class path
   */
  public static void publish(Path local, URI target, boolean force) {
    requireHadoop(target);
    HadoopFileSystems.publish(local, target, force);
  }

  /** The file's name: the last segment of its path. */
  public static String name(URI uri) {
    String p = uri.getPath();
    int slash = p.lastIndexOf('/', p.endsWith("/") ? p.length() - 2 : p.length() - 1);
    return p.substring(slash + 1).replace("/", "");
  }
}
