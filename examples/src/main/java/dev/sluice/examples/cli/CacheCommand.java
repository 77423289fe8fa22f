package dev.sluice.examples.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.internal.cache.CacheAdmin;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * {@code sluice cache ls|info|rm}: caches and staged data under {@code /dev/shm/sluice-<user>/} (or a
 * given directory). Shared memory outlives processes: this is how it is seen and freed.
 */
@Command(name = "cache", mixinStandardHelpOptions = true,
    description = "List, explain and remove caches and staged data under /dev/shm/sluice-<user>/ (or DIR); shared "
        + "memory outlives the processes that filled it.",
    subcommands = {CacheCommand.Ls.class, CacheCommand.Info.class, CacheCommand.Rm.class})
final class CacheCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: ls, info or rm");
  }

  /** {@code sluice cache ls [DIR]}. */
  @Command(name = "ls", mixinStandardHelpOptions = true,
      description = "One line per cache and staged dataset: kind, size, path, and what a cache holds.")
  static final class Ls implements Callable<Integer> {
    @Parameters(index = "0", arity = "0..1", paramLabel = "DIR",
        description = "The directory caches live under (default: /dev/shm/sluice-<user>).")
    Path root;

    @Spec CommandSpec spec;

    @Override
    public Integer call() {
      Path r = root != null ? root : CacheSpec.defaultDirectory();
      PrintWriter out = spec.commandLine().getOut();
      List<CacheAdmin.Entry> entries = CacheAdmin.list(r);
      if (entries.isEmpty()) {
        out.println("no caches or staged data under " + r);
      }
      for (CacheAdmin.Entry e : entries) {
        String what = e.kind() == CacheAdmin.Kind.CACHE ? summary(e.description(), e.path()) : "staged";
        out.printf(Locale.ROOT, "%-6s %10s  %s  %s%n", e.kind().name().toLowerCase(Locale.ROOT),
            Stager.bytes(e.bytes()), e.path(), what);
      }
      out.flush();
      return 0;
    }
  }

  /** {@code sluice cache info PATH}. */
  @Command(name = "info", mixinStandardHelpOptions = true,
      description = "What a cache holds: its key, its upstream, its blocks (published, being filled), its bytes.")
  static final class Info implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "PATH", description = "A cache directory (as sluice cache ls prints it).")
    Path dir;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      PrintWriter out = spec.commandLine().getOut();
      if (!CacheAdmin.isCache(dir)) {
        throw new IllegalArgumentException(dir + ": not a cache directory (no cache.json); sluice cache ls lists them");
      }
      Path meta = dir.resolve("cache.json");
      JsonNode description = json(Files.readString(meta), meta);
      CacheAdmin.Index index = CacheAdmin.index(dir, CacheSpec.DEFAULT_TIMEOUT.toNanos());
      out.println("cache     " + dir.toAbsolutePath().normalize());
      out.println("key       " + description.path("key").asText());
      out.println("mode      " + description.path("mode").asText());
      out.println("schema    " + description.path("schema").asText());
      out.println("rows      " + description.path("rows").asLong() + " in blocks of " + description.path("blockRows").asLong());
      out.printf(Locale.ROOT, "blocks    %d published, %d being filled (or left by a process that died), %d of %d%n",
          index.published(), index.claimed(), index.published() + index.claimed(), index.blocks());
      out.println("bytes     " + index.segmentBytes() + " (" + Stager.bytes(index.segmentBytes()) + ") in segments");
      out.println("orphans   " + index.orphans() + " (files of killed fills; removed when no process uses the cache)");
      out.println("in use    " + (CacheAdmin.inUse(dir) ? "yes, by another process" : "no"));
      out.println("created   " + description.path("created").asText());
      out.println("upstream");
      for (String line : lines(description)) {
        out.println("  " + line);
      }
      out.flush();
      return 0;
    }
  }

  /** {@code sluice cache rm PATH... | --all [DIR]} ({@code --all --dir DIR} is the same as {@code --all DIR}). */
  @Command(name = "rm", mixinStandardHelpOptions = true,
      description = "Remove caches or staged datasets. A cache another process uses is refused unless --force (its "
          + "readers keep the data they mapped; their later reads fall back to the source).")
  static final class Rm implements Callable<Integer> {
    @Parameters(arity = "0..*", paramLabel = "PATH",
        description = "Cache or staged directories (as sluice cache ls prints them); with --all, the directory caches live under.")
    List<Path> paths = List.of();

    @Option(names = "--all", description = "Every cache and staged dataset under the default directory (or DIR).")
    boolean all;

    @Option(names = "--dir", paramLabel = "DIR", description = "With --all: the directory caches live under.")
    Path root;

    @Option(names = "--force", description = "Remove a cache even while another process uses it.")
    boolean force;

    @Spec CommandSpec spec;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      if (!all && paths.isEmpty()) {
        throw new IllegalArgumentException("give the directories to remove, or --all");
      }
      List<Path> targets = all ? CacheAdmin.list(allRoot()).stream().map(CacheAdmin.Entry::path).toList() : paths;
      for (Path p : targets) {
        boolean cache = CacheAdmin.isCache(p);
        boolean staged = Files.isRegularFile(p.resolve(Stager.MARKER));
        if (!cache && !staged) {
          throw new IllegalArgumentException(p + ": not a cache or a staged dataset (no cache.json or "
              + Stager.MARKER + "); sluice cache ls lists them");
        }
        if (cache && !force && CacheAdmin.inUse(p)) {
          throw new IllegalArgumentException(p + ": in use by another process; stop it first, or give --force");
        }
        CacheAdmin.remove(p);
        out.println("removed " + p.toAbsolutePath().normalize());
      }
      if (all && targets.isEmpty()) {
        out.println("no caches or staged data under " + allRoot());
      }
      out.flush();
      return 0;
    }

    /** The directory {@code --all} empties: DIR, {@code --dir DIR} or the default; checked to be one caches live under. */
    private Path allRoot() {
      if (paths.size() > 1 || paths.size() == 1 && root != null) {
        throw new IllegalArgumentException("--all takes one DIR, the directory caches live under, but got "
            + (root != null ? "--dir " + root + " and " : "") + paths);
      }
      Path r = paths.size() == 1 ? paths.get(0) : root != null ? root : CacheSpec.defaultDirectory();
      if (paths.isEmpty() && root == null && !Files.exists(r)) {
        return r; // nothing cached yet
      }
      if (!Files.isDirectory(r)) {
        throw new IllegalArgumentException(r + ": " + (Files.exists(r) ? "not a directory" : "no such directory")
            + "; --all DIR names the directory caches live under");
      }
      if (CacheAdmin.isCache(r) || Files.isRegularFile(r.resolve(Stager.MARKER))) {
        throw new IllegalArgumentException(r + " is a cache or staged dataset itself, not the directory caches live"
            + " under; remove it with sluice cache rm " + r);
      }
      return r;
    }
  }

  /**
   * {@code 1000000 rows, 63 blocks of parquet: /data/train.parquet}, from the {@code cache.json} of
   * the cache {@code dir}; says so when it is missing or damaged.
   */
  static String summary(String description, Path dir) {
    if (description == null) {
      return "(no cache.json)";
    }
    JsonNode j;
    try {
      j = json(description, dir.resolve("cache.json"));
    } catch (IllegalArgumentException damaged) {
      return "(cache.json is damaged; sluice cache rm removes the cache)";
    }
    List<String> up = lines(j);
    String kind = up.size() > 3 ? up.get(3) : "?";
    List<String> files = up.stream().filter(l -> l.startsWith("file ") || l.startsWith("uri ")).toList();
    String first = files.isEmpty() ? "" : files.get(0).split(" ")[1];
    return j.path("rows").asLong() + " rows, " + j.path("blocks").asLong() + " blocks of " + kind
        + (first.isEmpty() ? "" : ": " + first + (files.size() > 1 ? " (+" + (files.size() - 1) + " files)" : ""));
  }

  /** The JSON of {@code file}, the {@code cache.json} of a cache, from its {@code text}. */
  static JsonNode json(String text, Path file) {
    try {
      JsonNode j = new ObjectMapper().readTree(text);
      if (j == null || !j.isObject()) {
        throw new IllegalArgumentException(file + ": the description of the cache " + file.getParent()
            + " is empty or not a JSON object (truncated or damaged); remove the cache (sluice cache rm "
            + file.getParent() + ")");
      }
      return j;
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(file + ": the description of the cache " + file.getParent()
          + " is not valid JSON (truncated or damaged: " + e.getOriginalMessage() + "); remove the cache (sluice"
          + " cache rm " + file.getParent() + ")", e);
    }
  }

  /** The lines of the {@code upstream} array. */
  static List<String> lines(JsonNode j) {
    List<String> out = new ArrayList<>();
    j.path("upstream").forEach(n -> out.add(n.asText()));
    return out;
  }
}
