package dev.sluice.examples.cli;

import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.internal.cache.CacheAdmin;
import dev.sluice.operators.internal.cache.PrivateDirs;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sluice stage ARCHIVE|DIR [--to DIR]}: copies a dataset directory, or unpacks a tar archive,
 * into private shared memory and prints the path to read it from.
 */
@Command(name = "stage", mixinStandardHelpOptions = true,
    description = {"Copy a dataset directory, or unpack a tar archive (plain, gzip, bzip2 or zstd), into private shared "
        + "memory (/dev/shm/sluice-<user>/staged/<name>, mode 0700), and print the path to read it from.",
        "The free space is checked first. An archive entry with an absolute path, a '..' component, a link pointing "
            + "outside, or a device file is refused, and nothing is written outside the target. Staging the same "
            + "source again prints the same path. An archive that unpacks to one top-level directory and nothing else "
            + "prints that directory."})
final class StageCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "ARCHIVE|DIR", description = "A tar archive or a dataset directory.")
  Path source;

  @Option(names = "--to", paramLabel = "DIR", description = "Stage into DIR instead (created with mode 0700).")
  Path to;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    Path target = to != null ? to : defaultTarget(source);
    if (to == null) {
      PrivateDirs.ensure(CacheSpec.defaultDirectory());
      PrivateDirs.ensure(CacheSpec.defaultDirectory().resolve(CacheAdmin.STAGED));
    } else if (target.toAbsolutePath().getParent() != null) {
      java.nio.file.Files.createDirectories(target.toAbsolutePath().getParent());
    }
    Stager stager = new Stager(source, target);
    stager.stage();
    PrintWriter out = spec.commandLine().getOut();
    out.println(stager.dataset().toAbsolutePath().normalize());
    out.flush();
    return 0;
  }

  /** {@code /dev/shm/sluice-<user>/staged/<name>}, the name the source's without archive extensions. */
  static Path defaultTarget(Path source) {
    Path file = source.toAbsolutePath().normalize().getFileName();
    String name = file == null ? "root" : file.toString();
    name = name.replaceFirst("(?i)(\\.tar)?(\\.(gz|tgz|bz2|tbz2|zst|tzst))?$", "");
    name = name.replaceFirst("(?i)\\.(tgz|tbz2|tzst)$", "");
    if (name.isEmpty() || name.startsWith(".")) {
      name = "staged" + name;
    }
    return CacheSpec.defaultDirectory().resolve(CacheAdmin.STAGED).resolve(name);
  }
}
