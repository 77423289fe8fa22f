package dev.sluice.core.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystemLoopException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A file or a directory written under a temporary name in its target's directory and renamed into
 * place only when complete, so that no reader ever sees part of it.
 *
 * <p>The temporary is named {@code .<target name>.tmp-<pid>-<random>}, a name nothing reads.
 * {@link #close()} before a commit deletes it (a failed write, an exception, a cancel). A process
 * killed while writing leaves only its temporary; opening the next output of the same target
 * ({@link #file}, {@link #directory}) deletes the temporaries of that target whose process is no
 * longer alive ({@link #removeStale}).
 *
 * <p>Two commits: {@link #commit()} replaces what is at the target (a file atomically; a directory
 * by renaming the old one aside to {@code .<target name>.old-<pid>-<random>}, renaming the new one
 * into place and deleting the old one), {@link #commitNew()} fails with
 * {@link FileAlreadyExistsException} when the target exists, so that of several writers of one
 * target exactly one wins. Not thread-safe: one writer uses one instance.
 */
public final class AtomicOutput implements AutoCloseable {
  /** {@code .<name>.<kind>-<pid>-<random>}: group 1 the target's name, 2 the pid. */
  private static final Pattern TEMPORARY = Pattern.compile("^\\.(.+)\\.(?:tmp|old)-(\\d+)-[0-9a-f]+$");

  private final Path target;
  private final Path temp;
  private final boolean directory;
  private boolean done;

  private AtomicOutput(Path target, Path temp, boolean directory) {
    this.target = target;
    this.temp = temp;
    this.directory = directory;
  }

  /**
   * An output file for {@code target}: removes the stale temporaries of {@code target}, then
   * creates an empty temporary file beside it (with {@code attrs}, e.g. a mode). The directory of
   * {@code target} must exist.
   *
   * @throws IOException when the temporary cannot be created
   */
  public static AtomicOutput file(Path target, FileAttribute<?>... attrs) throws IOException {
    Path t = resolve(target);
    removeStale(t);
    return new AtomicOutput(t, newTemporaryFile(t, attrs), false);
  }

  /**
   * {@link #file}, without looking for stale temporaries: for a writer of many files in one
   * directory that removes its orphans itself (the shards of a temporary shard-set directory, the
   * cache's segments), where listing the directory for every file would cost more than the write.
   */
  public static AtomicOutput fileAmongMany(Path target, FileAttribute<?>... attrs) throws IOException {
    Path t = resolve(target);
    return new AtomicOutput(t, newTemporaryFile(t, attrs), false);
  }

  /**
   * An output directory for {@code target}: removes the stale temporaries of {@code target}, then
   * creates an empty temporary directory beside it (with {@code attrs}), to be filled and then
   * committed. The directory of {@code target} must exist.
   *
   * @throws IOException when the temporary cannot be created
   */
  public static AtomicOutput directory(Path target, FileAttribute<?>... attrs) throws IOException {
    Path t = resolve(target);
    removeStale(t);
    for (int attempt = 0; ; attempt++) {
      Path temp = t.resolveSibling(temporaryName(t, "tmp"));
      try {
        Files.createDirectory(temp, attrs);
        return new AtomicOutput(t, temp, true);
      } catch (FileAlreadyExistsException e) {
        if (attempt == 10) {
          throw e;
        }
      }
    }
  }

  /**
   * Replaces {@code target} with {@code bytes}, atomically: written to a temporary file beside it
   * and forced to disk, renamed over it, and the directory forced ({@link #commit()}), so that a
   * crash leaves either the previous content or this one.
   *
   * @throws IOException when the file cannot be written (the previous one is then left as it was)
   */
  public static void replace(Path target, byte[] bytes) throws IOException {
    try (AtomicOutput out = file(target)) {
      try (FileChannel ch = FileChannel.open(out.temp(), StandardOpenOption.WRITE)) {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        while (buf.hasRemaining()) {
          ch.write(buf);
        }
        ch.force(true);
      }
      out.commit();
    }
  }

  /**
   * Creates another empty temporary file beside {@code target} under the same naming (a spill file
   * a writer deletes itself), so that it is removed like the others when its process dies.
   */
  public static Path newTemporaryFile(Path target, FileAttribute<?>... attrs) throws IOException {
    Path t = target.toAbsolutePath().normalize();
    for (int attempt = 0; ; attempt++) {
      Path temp = t.resolveSibling(temporaryName(t, "tmp"));
      try {
        return Files.createFile(temp, attrs);
      } catch (FileAlreadyExistsException e) {
        if (attempt == 10) {
          throw e;
        }
      }
    }
  }

  /** The target, absolute (a symbolic link to an existing file is resolved to that file). */
  public Path target() {
    return target;
  }

  /** The temporary file or directory to write. */
  public Path temp() {
    return temp;
  }

  /**
   * Renames the temporary to the target, replacing what is there. The target's directory is
   * forced to disk afterwards where the platform can open directories.
   *
   * @throws IOException when the rename fails (the temporary is then still there; {@link #close()} deletes it)
   */
  public void commit() throws IOException {
    checkOpen();
    if (!directory) {
      try {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } else {
      try {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE); // succeeds when the target is absent or an empty directory
      } catch (IOException e) {
        if (!Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
          throw e;
        }
        Path aside = target.resolveSibling(temporaryName(target, "old"));
        Files.move(target, aside, StandardCopyOption.ATOMIC_MOVE);
        try {
          Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException again) {
          try {
            Files.move(aside, target, StandardCopyOption.ATOMIC_MOVE);
          } catch (IOException restore) {
            again.addSuppressed(restore);
          }
          throw again;
        }
        deleteTree(aside);
      }
    }
    done = true;
    forceDirectory(target.getParent());
  }

  /**
   * Renames the temporary to the target only when nothing is there (an empty directory counts as
   * nothing for a directory output), atomically against other writers of the target: a file is
   * hard-linked into place (where the file system has no hard links, it is checked and then
   * renamed), a directory is renamed, which fails when the target is a directory that is not
   * empty. A temporary directory must not be empty when committed.
   *
   * @throws FileAlreadyExistsException when the target exists (the temporary is then still there)
   * @throws IOException when the rename fails
   */
  public void commitNew() throws IOException {
    checkOpen();
    if (!directory) {
      boolean linked;
      try {
        Files.createLink(target, temp);
        linked = true;
      } catch (FileAlreadyExistsException e) {
        throw exists(e);
      } catch (UnsupportedOperationException | FileSystemException noLinks) {
        linked = false;
      }
      if (linked) {
        done = true;
        deleteTree(temp);
      } else {
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
          throw exists(null);
        }
        Files.move(temp, target); // not atomic against a concurrent writer; the best without hard links
        done = true;
      }
    } else {
      if (Files.exists(target, LinkOption.NOFOLLOW_LINKS) && !isEmptyDirectory(target)) {
        throw exists(null);
      }
      try {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException e) {
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
          throw exists(e);
        }
        throw e;
      }
      done = true;
    }
    forceDirectory(target.getParent());
  }

  /** Deletes the temporary (a whole directory) unless committed; idempotent, best effort. */
  @Override
  public void close() {
    if (!done) {
      done = true;
      deleteTree(temp);
    }
  }

  /**
   * Deletes the temporaries of {@code target} (temporary outputs and directories set aside) whose
   * process is no longer alive; those of live processes, including this one, are left alone.
   *
   * @return how many were deleted
   */
  public static int removeStale(Path target) {
    Path t = target.toAbsolutePath().normalize();
    Path dir = t.getParent();
    if (dir == null || t.getFileName() == null || !Files.isDirectory(dir)) {
      return 0;
    }
    String name = t.getFileName().toString();
    int removed = 0;
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "." + glob(name) + ".*-*-*")) {
      for (Path p : entries) {
        Matcher m = TEMPORARY.matcher(p.getFileName().toString());
        if (m.matches() && m.group(1).equals(name) && !alive(m.group(2))) {
          deleteTree(p);
          removed++;
        }
      }
    } catch (IOException | RuntimeException e) {
      // best effort: a stale temporary takes space, never correctness
    }
    return removed;
  }

  /** True for a name this class gives temporaries ({@code .<name>.tmp-<pid>-<random>}, {@code .old-}). */
  public static boolean isTemporary(String fileName) {
    return TEMPORARY.matcher(fileName).matches();
  }

  /** Deletes {@code p}, a file or a whole directory (links are deleted, never followed); best effort. */
  public static void deleteTree(Path p) {
    try {
      if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
        Files.deleteIfExists(p);
        return;
      }
      Files.walkFileTree(p, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
          Files.deleteIfExists(file);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path file, IOException e) {
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
          Files.deleteIfExists(dir);
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException ignored) {
      // best effort: what is left is a temporary that nothing reads
    }
  }

  /**
   * An I/O failure's reason for a message that names the target, not the temporary: a
   * {@link FileSystemException}'s reason without its file names ({@code "No space left on device"}),
   * or for one that carries only file names (the JDK throws {@link AccessDeniedException} so) the
   * operating system's words for its kind ({@code "Permission denied"}); else the message, else the
   * exception's class.
   */
  public static String reason(IOException e) {
    if (e instanceof FileSystemException f) {
      if (f.getReason() != null && !f.getReason().isBlank()) {
        return f.getReason();
      }
      String kind = e instanceof AccessDeniedException ? "Permission denied"
          : e instanceof NoSuchFileException ? "No such file or directory"
          : e instanceof FileAlreadyExistsException ? "File exists"
          : e instanceof DirectoryNotEmptyException ? "Directory not empty"
          : e instanceof NotDirectoryException ? "Not a directory"
          : e instanceof NotLinkException ? "Not a link"
          : e instanceof FileSystemLoopException ? "Too many levels of symbolic links"
          : null;
      if (kind != null) {
        return kind;
      }
    }
    String m = e.getMessage();
    return m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
  }

  /** Forces a directory's entries to disk, where the platform can open a directory (Linux can). */
  public static void forceDirectory(Path dir) throws IOException {
    if (dir == null || System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows")) {
      return;
    }
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    }
  }

  private static Path resolve(Path target) throws IOException {
    Path t = target.toAbsolutePath().normalize();
    if (t.getFileName() == null) {
      throw new IOException(target + " cannot be replaced (it is a file system's root)");
    }
    if (Files.isSymbolicLink(t)) {
      try {
        t = t.toRealPath();
      } catch (NoSuchFileException dangling) {
        // the link itself is the target
      }
    }
    return t;
  }

  private static String temporaryName(Path target, String kind) {
    return "." + target.getFileName() + "." + kind + "-" + ProcessHandle.current().pid() + "-"
        + Integer.toHexString(ThreadLocalRandom.current().nextInt());
  }

  private static boolean alive(String pid) {
    try {
      long p = Long.parseLong(pid);
      return p == ProcessHandle.current().pid() || ProcessHandle.of(p).map(ProcessHandle::isAlive).orElse(false);
    } catch (NumberFormatException e) {
      return true; // not ours to judge
    }
  }

  private static String glob(String name) {
    StringBuilder sb = new StringBuilder();
    for (char c : name.toCharArray()) {
      if ("*?[]{}\\".indexOf(c) >= 0) {
        sb.append('\\');
      }
      sb.append(c);
    }
    return sb.toString();
  }

  private static boolean isEmptyDirectory(Path p) {
    if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
      return false;
    }
    try (DirectoryStream<Path> s = Files.newDirectoryStream(p)) {
      return !s.iterator().hasNext();
    } catch (IOException e) {
      return false;
    }
  }

  private FileAlreadyExistsException exists(Exception cause) {
    FileAlreadyExistsException e = new FileAlreadyExistsException(target.toString(), null, "already exists");
    if (cause != null) {
      e.initCause(cause);
    }
    return e;
  }

  private void checkOpen() {
    if (done) {
      throw new IllegalStateException("already committed or closed: " + temp);
    }
  }
}
