package dev.sluice.io.parquet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs SQL statements in DuckDB through Node and the {@code @duckdb/node-api} package, which ships
 * DuckDB's engine. The package's {@code node_modules} directory is the system property
 * {@code sluice.duckdb.dir}, else the environment variable {@code SLUICE_DUCKDB_DIR}, else
 * {@code target/duckdb/node_modules} ({@code npm install --prefix target/duckdb @duckdb/node-api}).
 * Without Node or the package the calling test is skipped, except under {@code CI=true}, where it
 * fails.
 */
final class DuckDb {
  private static final String SCRIPT = """
      const { DuckDBInstance } = require(process.argv[2]);
      const fs = require('fs');
      (async () => {
        const stmts = fs.readFileSync(process.argv[3], 'utf8').split('\\n;;\\n');
        const db = await DuckDBInstance.create(':memory:');
        const c = await db.connect();
        for (const s of stmts) {
          try {
            await c.run(s);
          } catch (e) {
            console.error('failed: ' + s + '\\n' + e);
            process.exit(3);
          }
        }
      })();
      """;

  private DuckDb() {}

  /** The {@code @duckdb/node-api} package directory, skipping (or, under CI, failing) when it or Node is missing. */
  static Path require() throws Exception {
    String dir = System.getProperty("sluice.duckdb.dir", System.getenv("SLUICE_DUCKDB_DIR"));
    Path modules = Path.of(dir == null || dir.isBlank() ? "target/duckdb/node_modules" : dir).toAbsolutePath();
    Path pkg = modules.resolve("@duckdb/node-api");
    String missing = null;
    if (!Files.isRegularFile(pkg.resolve("package.json"))) {
      missing = "DuckDB for Node is missing at " + pkg + " (npm install --prefix " + modules.getParent()
          + " @duckdb/node-api, or set SLUICE_DUCKDB_DIR to a node_modules directory holding it)";
    } else if (run(List.of("node", "--version"), 30).exit != 0) {
      missing = "node is missing from the PATH (apt-get install nodejs)";
    }
    if (missing != null) {
      if ("true".equalsIgnoreCase(System.getenv("CI"))) {
        Assertions.fail(missing);
      }
      System.err.println("skipping the DuckDB cross-check: " + missing);
      Assumptions.abort(missing + "; skipping the DuckDB cross-check");
    }
    return pkg;
  }

  /** Runs {@code statements} in one in-memory DuckDB, in order, failing the test on the first error. */
  static void run(Path pkg, Path work, List<String> statements) throws Exception {
    Path script = work.resolve("duckdb-run.js");
    Path sql = work.resolve("duckdb-statements.sql");
    Files.writeString(script, SCRIPT);
    Files.writeString(sql, String.join("\n;;\n", statements));
    Result r = run(List.of("node", script.toString(), pkg.toString(), sql.toString()), 300);
    if (r.exit != 0) {
      Assertions.fail("DuckDB failed (" + r.exit + "):\n" + r.err + "\n" + r.out);
    }
  }

  private record Result(int exit, String out, String err) {}

  private static Result run(List<String> cmd, int timeoutSeconds) throws InterruptedException, IOException {
    Path out = Files.createTempFile("duckdb", ".out");
    Path err = Files.createTempFile("duckdb", ".err");
    try {
      Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return new Result(-1, "", "timed out after " + timeoutSeconds + " s");
      }
      return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
    } catch (IOException e) {
      return new Result(-1, "", e.toString());
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }
}
