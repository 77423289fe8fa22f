package dev.sluice.io.remote;

import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FilterFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * Local files under a test scheme ({@code <scheme>:///abs/path}), as a remote file system: the
 * delegating part the test file systems share; each supplies its own {@code open}.
 */
abstract class LocalBackedFileSystem extends FilterFileSystem {
  private final String scheme;

  LocalBackedFileSystem(String scheme) {
    super(new RawLocalFileSystem());
    this.scheme = scheme;
  }

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    fs.initialize(URI.create("file:///"), conf);
    setConf(conf);
  }

  @Override
  public URI getUri() {
    return URI.create(scheme + ":///");
  }

  /** The local path of {@code p}. */
  static Path local(Path p) {
    return new Path("file", null, p.toUri().getPath());
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    FileStatus s = fs.getFileStatus(local(f));
    s.setPath(f);
    return s;
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    FileStatus[] all = fs.listStatus(local(f));
    for (FileStatus s : all) {
      s.setPath(new Path(scheme, null, s.getPath().toUri().getPath()));
    }
    return all;
  }
}
