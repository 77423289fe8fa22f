package dev.sluice.operators.internal.cache;

import dev.sluice.operators.CacheException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * Directories and files only their owner may use: directories 0700, files 0600, owned by the user
 * this process runs as. A directory of another user, or one that others may read, write or enter,
 * is refused: a cache holds decoded data, and shared memory is visible to every process of the
 * node.
 */
public final class PrivateDirs {
  static final Set<PosixFilePermission> DIR = PosixFilePermissions.fromString("rwx------");
  static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> OTHERS = EnumSet.of(PosixFilePermission.GROUP_READ,
      PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
      PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

  private PrivateDirs() {}

  /** True where the file system has POSIX permissions (Linux, macOS). */
  static boolean posix(Path p) {
    return Files.getFileAttributeView(p, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS) != null;
  }

  /** The attribute that creates a directory with mode 0700, where the file system has modes. */
  static FileAttribute<?>[] dirAttributes(Path p) {
    return posixSupported(p) ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(DIR)} : new FileAttribute<?>[0];
  }

  /** The attribute that creates a file with mode 0600, where the file system has modes. */
  static FileAttribute<?>[] fileAttributes(Path p) {
    return posixSupported(p) ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(FILE)} : new FileAttribute<?>[0];
  }

  private static boolean posixSupported(Path p) {
    Path existing = p.toAbsolutePath();
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    return existing == null ? java.nio.file.FileSystems.getDefault().supportedFileAttributeViews().contains("posix")
        : posix(existing);
  }

  /**
   * Creates {@code dir} with mode 0700 when missing (its parents as usual), else checks it.
   *
   * @throws CacheException naming the directory when it is not a directory, belongs to another user
   *     or is open to others
   */
  public static Path ensure(Path dir) {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      try {
        Path parent = dir.toAbsolutePath().getParent();
        if (parent != null) {
          Files.createDirectories(parent);
        }
        Files.createDirectory(dir, dirAttributes(dir));
        if (posix(dir)) {
          Files.setPosixFilePermissions(dir, DIR); // whatever the umask
        }
      } catch (FileAlreadyExistsException raced) {
        // another process created it first: checked below
      } catch (IOException e) {
        throw new CacheException(dir.toString(), "cannot create the directory: " + e, e);
      }
    }
    check(dir);
    return dir;
  }

  /**
   * Checks an existing directory: a directory (not a link), owned by this process's user, no
   * permission for group or others.
   *
   * @throws CacheException naming the directory, what was found and what to do
   */
  public static void check(Path dir) {
    if (Files.isSymbolicLink(dir)) {
      throw new CacheException(dir.toString(), "is a symbolic link; a cache directory must be a directory of its own",
          null);
    }
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      throw new CacheException(dir.toString(), "is not a directory", null);
    }
    if (!posix(dir)) {
      return;
    }
    try {
      PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      UserPrincipal me = currentUser(dir);
      if (me != null && !a.owner().equals(me)) {
        throw new CacheException(dir.toString(), "belongs to user " + a.owner().getName() + ", not to "
            + me.getName() + " who runs this process; a cache is private to its user: use another directory", null);
      }
      Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
      open.addAll(a.permissions());
      open.retainAll(OTHERS);
      if (!open.isEmpty()) {
        throw new CacheException(dir.toString(), "is open to other users (mode " + mode(a.permissions())
            + "); a cache holds decoded data and must be private: chmod 700 " + dir + ", or remove it", null);
      }
    } catch (IOException e) {
      throw new CacheException(dir.toString(), "cannot read its owner and permissions: " + e, e);
    }
  }

  /**
   * Checks a file of a cache found on disk (a segment, the index, its lock files, {@code
   * cache.json}) and takes group and others' permissions away when it has any: a file that is not
   * a link, owned by this process's user, mode 0600 afterwards.
   *
   * @throws CacheException naming the file when it is a link, belongs to another user, or its mode
   *     cannot be read or changed
   */
  static void tighten(Path file) {
    if (!posix(file)) {
      return;
    }
    try {
      PosixFileAttributes a = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      if (a.isSymbolicLink()) {
        throw new CacheException(file.toString(), "is a symbolic link; the files of a cache must be its own", null);
      }
      UserPrincipal me = currentUser(file.toAbsolutePath().getParent());
      if (me != null && !a.owner().equals(me)) {
        throw new CacheException(file.toString(), "belongs to user " + a.owner().getName() + ", not to " + me.getName()
            + " who runs this process; a cache is private to its user: remove the cache (sluice cache rm)", null);
      }
      Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
      open.addAll(a.permissions());
      open.retainAll(OTHERS);
      if (!open.isEmpty()) {
        Set<PosixFilePermission> mine = EnumSet.noneOf(PosixFilePermission.class);
        mine.addAll(a.permissions());
        mine.removeAll(OTHERS);
        Files.setPosixFilePermissions(file, mine);
      }
    } catch (java.nio.file.NoSuchFileException gone) {
      // removed meanwhile: whoever opens it next finds out
    } catch (IOException e) {
      throw new CacheException(file.toString(), "cannot read or restrict its owner and permissions: " + e, e);
    }
  }

  /** Creates {@code file} empty with mode 0600 when missing, else {@link #tighten}s it. */
  static void createFile(Path file) throws IOException {
    try {
      Files.createFile(file, fileAttributes(file));
    } catch (FileAlreadyExistsException exists) {
      tighten(file);
      return;
    }
    restrict(file);
  }

  /** Sets mode 0600 on a file this process created (whatever the umask). */
  static void restrict(Path file) throws IOException {
    if (posix(file)) {
      Files.setPosixFilePermissions(file, FILE);
    }
  }

  /** {@code 0755} for rwxr-xr-x. */
  static String mode(Set<PosixFilePermission> perms) {
    int m = 0;
    for (PosixFilePermission p : perms) {
      m |= 1 << (8 - p.ordinal());
    }
    return String.format(Locale.ROOT, "%04o", m);
  }

  /**
   * The user this process runs as: the owner of {@code /proc/self} on Linux, else of a file this
   * process creates next to {@code near}; null when neither can be read.
   */
  static UserPrincipal currentUser(Path near) {
    try {
      Path self = Path.of("/proc/self");
      if (Files.exists(self)) {
        return Files.getOwner(self);
      }
      Path probe = Files.createTempFile(near, ".owner", ".tmp");
      try {
        return Files.getOwner(probe);
      } finally {
        Files.deleteIfExists(probe);
      }
    } catch (IOException | UnsupportedOperationException e) {
      return null;
    }
  }
}
