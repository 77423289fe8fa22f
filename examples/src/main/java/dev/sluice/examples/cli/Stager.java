package dev.sluice.examples.cli;

import dev.sluice.core.DatasetIOException;
import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.operators.internal.cache.CacheAdmin;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.apache.commons.compress.compressors.CompressorException;
import org.apache.commons.compress.compressors.CompressorStreamFactory;

/**
 * Copies a dataset directory, or unpacks a tar archive (plain, gzip, bzip2 or zstd), into a private
 * directory (0700, files 0600), normally in shared memory, so that every process of the node reads
 * it from memory.
 *
 * <p>An archive is untrusted input. Every entry is checked before anything is written: an absolute
 * name, a {@code ..} component, a link whose target lies outside the staged directory (or is
 * absolute), an entry whose path runs through a link, and a device file or FIFO are refused naming
 * the entry. The free space is checked against the entries' sizes as they are read. The data is
 * written to a temporary directory beside the target ({@link AtomicOutput}) and renamed into place
 * when complete, so a staging that fails leaves nothing behind (a killed one leaves a temporary
 * that the next staging to the target deletes), and nothing is ever written outside the target.
 * Of two stagings to one target, one writes it and the other finds it staged.
 */
final class Stager {
  /** The file in a staged directory that says what it was staged from. */
  static final String MARKER = ".sluice-stage";

  private final Path source;
  private final Path target;

  Stager(Path source, Path target) {
    this.source = source;
    this.target = target;
  }

  /** What staging found wrong with its input: exit 2, one line. */
  static final class StageException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    StageException(String message) {
      super(message);
    }
  }

  /** One entry to write: a directory, a file (with its bytes from the archive or a source file), or a link. */
  private record Item(String name, char type, long size, String link, Path from) {}

  /**
   * Stages the source into the target; returns false when the target already holds this source
   * (same path, size and modification time: nothing done).
   *
   * @throws StageException for an unsafe entry, a source that is neither a directory nor a tar
   *     archive, a target that holds something else, or too little free space
   */
  boolean stage() throws IOException {
    if (!Files.exists(source)) {
      throw new StageException(source + ": no such file or directory");
    }
    String stamp = stamp();
    if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
      return alreadyStaged(stamp);
    }
    long free = usable(target);
    List<Item> items = Files.isDirectory(source) ? scanDirectory(free) : scanArchive(free);
    Path parent = target.toAbsolutePath().getParent();
    Files.createDirectories(parent);
    try (AtomicOutput out = AtomicOutput.directory(target,
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")))) {
      Path temp = out.temp();
      try {
        if (Files.isDirectory(source)) {
          for (Item i : items) {
            write(temp, i, null);
          }
        } else {
          extract(temp, items);
        }
        Path marker = temp.resolve(MARKER);
        Files.deleteIfExists(marker); // an archive's own entry of that name is replaced, never written through
        Files.writeString(marker, stamp, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE);
        Files.setPosixFilePermissions(marker, PosixFilePermissions.fromString("rw-------"));
      } catch (IOException e) {
        throw new DatasetIOException(target.toString(), "cannot stage " + source + ": " + AtomicOutput.reason(e), e);
      }
      try {
        out.commitNew();
      } catch (FileAlreadyExistsException raced) {
        return alreadyStaged(stamp); // another stager completed it meanwhile
      }
      return true;
    }
  }

  /**
   * The directory to read the staged dataset from: for an archive whose unpacked tree is exactly one
   * top-level directory (as {@code tar czf set.tar.gz set} makes), that directory; else the target.
   */
  Path dataset() throws IOException {
    if (Files.isDirectory(source)) {
      return target;
    }
    List<Path> top;
    try (var entries = Files.list(target)) {
      top = entries.filter(p -> !p.getFileName().toString().equals(MARKER)).limit(2).toList();
    }
    return top.size() == 1 && Files.isDirectory(top.get(0), LinkOption.NOFOLLOW_LINKS) ? top.get(0) : target;
  }

  /** False when the existing target holds this source; else the target holds something else. */
  private boolean alreadyStaged(String stamp) throws IOException {
    Path marker = target.resolve(MARKER);
    if (Files.isRegularFile(marker) && Files.readString(marker).equals(stamp)) {
      return false;
    }
    throw new StageException(target + " already exists and holds something else; remove it (sluice cache rm "
        + target + ") or stage to another directory with --to");
  }

  /** The source's path, size and modification time: what the marker records. */
  private String stamp() throws IOException {
    BasicFileAttributes a = Files.readAttributes(source, BasicFileAttributes.class);
    return "source " + source.toAbsolutePath().normalize() + "\nsize " + a.size() + "\nmodified "
        + a.lastModifiedTime().to(TimeUnit.NANOSECONDS) + "\n";
  }

  private static long usable(Path target) throws IOException {
    Path p = target.toAbsolutePath();
    while (p != null && !Files.exists(p)) {
      p = p.getParent();
    }
    return p == null ? Long.MAX_VALUE : Files.getFileStore(p).getUsableSpace();
  }

  private void checkSpace(long needed, long free) {
    if (needed > free) {
      throw new StageException(target + ": " + bytes(free) + " free, but " + source + " needs at least "
          + bytes(needed) + "; stage to a larger file system with --to, or give the container more shared memory");
    }
  }

  static String bytes(long n) {
    return CacheAdmin.bytes(n);
  }

  // ---------------------------------------------------------------- a directory

  private List<Item> scanDirectory(long free) throws IOException {
    Path root = source.toAbsolutePath().normalize();
    List<Item> items = new ArrayList<>();
    long[] total = {0};
    Files.walkFileTree(root, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
        if (!dir.equals(root)) {
          items.add(new Item(root.relativize(dir).toString(), 'd', 0, null, dir));
        }
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        String name = root.relativize(file).toString();
        if (attrs.isSymbolicLink()) {
          String link = Files.readSymbolicLink(file).toString();
          checkLink(name, link);
          items.add(new Item(name, 'l', 0, link, file));
        } else if (attrs.isRegularFile()) {
          total[0] += attrs.size();
          checkSpace(total[0], free);
          items.add(new Item(name, 'f', attrs.size(), null, file));
        } else {
          throw new StageException(file + ": not a regular file, directory or link (a device file, FIFO or"
              + " socket cannot be staged)");
        }
        return FileVisitResult.CONTINUE;
      }
    });
    return items;
  }

  // ---------------------------------------------------------------- a tar archive

  private InputStream open() throws IOException {
    InputStream in = new BufferedInputStream(Files.newInputStream(source), 1 << 16);
    try {
      String codec = CompressorStreamFactory.detect(in);
      return new BufferedInputStream(new CompressorStreamFactory().createCompressorInputStream(codec, in), 1 << 16);
    } catch (CompressorException notCompressed) {
      return in; // a plain tar (detect reset the stream)
    }
  }

  /** Reads every entry's header, checks it and the space; writes nothing. */
  private List<Item> scanArchive(long free) throws IOException {
    List<Item> items = new ArrayList<>();
    Set<String> links = new HashSet<>();
    Set<String> names = new HashSet<>();
    long total = 0;
    try (TarArchiveInputStream tar = new TarArchiveInputStream(open())) {
      TarArchiveEntry e;
      boolean any = false;
      while ((e = next(tar)) != null) {
        any = true;
        String name = checkName(e.getName());
        if (name.isEmpty()) {
          continue; // "./"
        }
        for (String l : links) {
          if (name.startsWith(l + "/")) {
            throw new StageException(source + ": entry '" + e.getName() + "' runs through the link '" + l
                + "'; an archive may not write through its own links");
          }
        }
        byte flag = e.getLinkFlag();
        boolean regular = flag == TarConstants.LF_NORMAL || flag == TarConstants.LF_OLDNORM
            || flag == TarConstants.LF_CONTIG;
        if (!regular && !e.isSymbolicLink() && !e.isLink() && !e.isDirectory()) {
          throw new StageException(source + ": entry '" + e.getName() + "' is a " + kind(e) + "; only files,"
              + " directories and links inside the archive can be staged");
        }
        if (e.isSymbolicLink()) {
          checkLink(name, e.getLinkName());
          links.add(name);
          items.add(new Item(name, 'l', 0, e.getLinkName(), null));
        } else if (e.isLink()) {
          String to = checkName(e.getLinkName());
          if (!names.contains(to)) {
            throw new StageException(source + ": entry '" + e.getName() + "' is a hard link to '" + e.getLinkName()
                + "', which is not an earlier file of the archive");
          }
          total += sizeOf(items, to);
          checkSpace(total, free);
          items.add(new Item(name, 'h', 0, to, null));
        } else if (e.isDirectory()) {
          items.add(new Item(name, 'd', 0, null, null));
        } else {
          total += e.getSize();
          checkSpace(total, free);
          items.add(new Item(name, 'f', e.getSize(), null, null));
        }
        names.add(name);
      }
      if (!any) {
        throw new StageException(source + ": not a tar archive (plain, gzip, bzip2 or zstd), or an empty one");
      }
    }
    return items;
  }

  private static long sizeOf(List<Item> items, String name) {
    for (int i = items.size() - 1; i >= 0; i--) {
      if (items.get(i).name().equals(name)) {
        return items.get(i).size();
      }
    }
    return 0;
  }

  private TarArchiveEntry next(TarArchiveInputStream tar) {
    try {
      return tar.getNextEntry();
    } catch (IOException | RuntimeException e) {
      throw new StageException(source + ": not a readable tar archive: " + e.getMessage());
    }
  }

  private static String kind(TarArchiveEntry e) {
    if (e.isCharacterDevice()) {
      return "character device";
    }
    if (e.isBlockDevice()) {
      return "block device";
    }
    if (e.isFIFO()) {
      return "FIFO";
    }
    return "special entry (type '" + (char) e.getLinkFlag() + "')";
  }

  /** The entry name made relative and checked: not absolute, no {@code ..}; a trailing slash dropped. */
  private String checkName(String raw) {
    String name = raw.replace('\\', '/');
    if (name.startsWith("/") || name.matches("^[A-Za-z]:.*")) {
      throw new StageException(source + ": entry '" + raw + "' has an absolute path; an archive may only write"
          + " inside the directory it is staged to");
    }
    List<String> parts = new ArrayList<>();
    for (String p : name.split("/")) {
      if (p.equals("..")) {
        throw new StageException(source + ": entry '" + raw + "' has a '..' component; an archive may only write"
            + " inside the directory it is staged to");
      }
      if (!p.isEmpty() && !p.equals(".")) {
        parts.add(p);
      }
    }
    return String.join("/", parts);
  }

  /** Checks that link {@code name} pointing to {@code link} stays inside the staged directory. */
  private void checkLink(String name, String link) {
    String where = source + ": link '" + name + "' -> '" + link + "'";
    if (link.isEmpty() || link.startsWith("/") || link.replace('\\', '/').startsWith("/")) {
      throw new StageException(where + " points outside the staged directory (an absolute target)");
    }
    int depth = name.split("/").length - 1; // the link's directory, below the staged directory
    for (String p : link.replace('\\', '/').split("/")) {
      if (p.equals("..")) {
        depth--;
        if (depth < 0) {
          throw new StageException(where + " points outside the staged directory");
        }
      } else if (!p.isEmpty() && !p.equals(".")) {
        depth++;
      }
    }
  }

  private void extract(Path temp, List<Item> checked) throws IOException {
    int k = 0;
    try (TarArchiveInputStream tar = new TarArchiveInputStream(open())) {
      TarArchiveEntry e;
      while ((e = next(tar)) != null) {
        String name = checkName(e.getName());
        if (name.isEmpty()) {
          continue;
        }
        Item i = checked.get(k++);
        if (!i.name().equals(name)) {
          throw new StageException(source + ": the archive changed while it was read (entry '" + e.getName() + "')");
        }
        write(temp, i, tar);
      }
    }
  }

  /** Writes one checked item under {@code temp}; never follows a link, never leaves {@code temp}. */
  private static void write(Path temp, Item i, InputStream content) throws IOException {
    Path p = temp.resolve(i.name()).normalize();
    if (!p.startsWith(temp)) {
      throw new StageException("entry '" + i.name() + "' would be written outside the staged directory");
    }
    Files.createDirectories(p.getParent(), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    switch (i.type()) {
      case 'd' -> {
        if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
          Files.createDirectory(p, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
      }
      case 'l' -> {
        Files.deleteIfExists(p);
        Files.createSymbolicLink(p, Path.of(i.link()));
      }
      case 'h' -> {
        Files.deleteIfExists(p);
        Files.copy(temp.resolve(i.link()), p, LinkOption.NOFOLLOW_LINKS);
      }
      default -> {
        Files.deleteIfExists(p);
        try (OutputStream out = Files.newOutputStream(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS)) {
          if (content != null) {
            content.transferTo(out);
          } else {
            Files.copy(i.from(), out);
          }
        }
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
        if (i.from() != null) {
          Files.setLastModifiedTime(p, FileTime.from(Files.getLastModifiedTime(i.from()).toInstant()));
        }
      }
    }
  }
}
