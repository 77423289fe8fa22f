package dev.sluice.examples.deps;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.io.Formats;
import dev.sluice.io.npy.Npy;
import dev.sluice.operators.Pipeline;
import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.Observation;
import java.io.File;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleDescriptor.Exports;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import reactor.core.observability.micrometer.Micrometer;
import reactor.core.publisher.Flux;

/**
 * The library jars are modules ({@code dev.sluice.core}, {@code dev.sluice.operators},
 * {@code dev.sluice.io}) that export exactly their packages without an {@code internal} segment,
 * and export internal packages only to the other Sluice modules; a program on the module path
 * reads an npy file through {@code Pipeline} and cannot reach the internal packages.
 */
class ModuleBoundaryTest {
  private static final Pattern INTERNAL = Pattern.compile("(^|\\.)internal(\\.|$)");
  private static final Set<String> SLUICE_MODULES = Set.of("dev.sluice.core", "dev.sluice.operators", "dev.sluice.io");
  private static final int ROWS = 301;

  @TempDir
  Path dir;

  @Test
  void eachLibraryModuleExportsExactlyItsNonInternalPackages() throws Exception {
    checkExports(Dataset.class, "dev.sluice.core");
    checkExports(Pipeline.class, "dev.sluice.operators");
    checkExports(Formats.class, "dev.sluice.io");
  }

  private static void checkExports(Class<?> member, String name) throws URISyntaxException {
    Path location = location(member);
    List<ModuleReference> found = new ArrayList<>(ModuleFinder.of(location).findAll());
    assertThat(found).as("modules in %s", location).hasSize(1);
    ModuleDescriptor d = found.get(0).descriptor();
    assertThat(d.isAutomatic()).as("%s has a module-info", location).isFalse();
    assertThat(d.name()).isEqualTo(name);

    Set<String> own = d.packages().stream().filter(p -> p.startsWith("dev.sluice.")).collect(Collectors.toSet());
    Set<String> api = own.stream().filter(p -> !INTERNAL.matcher(p).find()).collect(Collectors.toSet());
    assertThat(api).as("%s has API packages", name).isNotEmpty();
    Set<String> unqualified = d.exports().stream().filter(e -> !e.isQualified()).map(Exports::source)
        .collect(Collectors.toSet());
    assertThat(unqualified).as("%s exports to everyone", name).isEqualTo(api);
    for (Exports e : d.exports().stream().filter(Exports::isQualified).toList()) {
      assertThat(e.source()).as("%s qualified export", name).matches(INTERNAL.asPredicate()).isIn(own);
      assertThat(e.targets()).as("%s exports %s to", name, e.source())
          .isSubsetOf(SLUICE_MODULES).doesNotContain(name);
    }
    assertThat(d.opens()).allSatisfy(o -> assertThat(o.isQualified()).as("%s opens %s", name, o.source()).isTrue());
  }

  @Test
  void aProgramOnTheModulePathRunsAnNpyPipelineAndCannotReachInternalPackages() throws Exception {
    Path npy = dir.resolve("npy");
    Npy.write(Datasets.synthetic(ROWS, 4, 5), npy);

    Set<Path> modulePath = new LinkedHashSet<>();
    for (Class<?> c : List.of(Dataset.class, Pipeline.class, Formats.class, Flux.class, Publisher.class,
        MeterRegistry.class, KeyValue.class, Observation.class, Micrometer.class, Logger.class,
        ObjectMapper.class, JsonParser.class, JsonInclude.class)) {
      modulePath.add(location(c));
    }
    for (String provider : List.of("org.slf4j.simple.SimpleServiceProvider", "org.slf4j.nop.NOPServiceProvider")) {
      try {
        modulePath.add(location(Class.forName(provider, false, getClass().getClassLoader())));
        break;
      } catch (ClassNotFoundException absent) {
        // the next provider, or none: slf4j then says so on stderr
      }
    }
    String mp = modulePath.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator));

    Path src = dir.resolve("src");
    Files.createDirectories(src.resolve("smoke"));
    Files.writeString(src.resolve("module-info.java"),
        "module smoke { requires dev.sluice.operators; requires dev.sluice.io; }\n");
    Files.writeString(src.resolve("smoke/Main.java"), String.join("\n",
        "package smoke;",
        "import dev.sluice.core.Batch;",
        "import dev.sluice.core.PipelineContext;",
        "import dev.sluice.core.PipelineIterator;",
        "import dev.sluice.io.Formats;",
        "import dev.sluice.io.npy.Npy;",
        "import dev.sluice.io.npy.NpyDataset;",
        "import dev.sluice.operators.Pipeline;",
        "import java.nio.file.Path;",
        "public final class Main {",
        "  public static void main(String[] args) {",
        "    Path path = Path.of(args[0]);",
        "    long rows = 0;",
        "    long sum = 0;",
        "    try (NpyDataset data = Npy.open(path);",
        "        PipelineIterator<Batch> it = Pipeline.from(data).shuffle().batch(64).prefetch(2)",
        "            .iterate(PipelineContext.defaults().withSeed(3), 1)) {",
        "      for (Batch b : it) {",
        "        try (b) {",
        "          for (int i = 0; i < b.size(); i++) { rows++; sum += b.index(i); }",
        "        }",
        "      }",
        "    }",
        "    System.out.println(\"rows \" + rows + \" \" + sum);",
        "    System.out.println(\"format \" + Formats.detect(path).name());",
        "    System.out.println(\"modules \" + Pipeline.class.getModule().getName() + \" \"",
        "        + Npy.class.getModule().getName());",
        "    Module core = ModuleLayer.boot().findModule(\"dev.sluice.core\").orElseThrow();",
        "    Module io = ModuleLayer.boot().findModule(\"dev.sluice.io\").orElseThrow();",
        "    System.out.println(\"internal to this program \"",
        "        + core.isExported(\"dev.sluice.core.internal\", Main.class.getModule()));",
        "    System.out.println(\"internal to dev.sluice.io \" + core.isExported(\"dev.sluice.core.internal\", io));",
        "  }",
        "}",
        ""));

    Path classes = dir.resolve("classes");
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    StringWriter diagnostics = new StringWriter();
    int rc = javac.getTask(diagnostics, null, null,
        List.of("--release", "17", "--module-path", mp, "-d", classes.toString()), null,
        javac.getStandardFileManager(null, null, StandardCharsets.UTF_8).getJavaFileObjects(
            src.resolve("module-info.java"), src.resolve("smoke/Main.java"))).call() ? 0 : 1;
    assertThat(rc).as(diagnostics.toString()).isZero();

    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!a.startsWith("-agentlib") && !a.startsWith("-javaagent")) {
        cmd.add(a);
      }
    }
    cmd.addAll(List.of("--module-path", classes + File.pathSeparator + mp, "-m", "smoke/smoke.Main", npy.toString()));
    Path out = dir.resolve("out.txt");
    Path err = dir.resolve("err.txt");
    Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the child JVM finished").isTrue();
    String stderr = Files.readString(err, StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as(stderr).isZero();
    assertThat(stderr).isEmpty();
    long expectedSum = (long) ROWS * (ROWS - 1) / 2;
    assertThat(Files.readAllLines(out, StandardCharsets.UTF_8)).containsExactly(
        "rows " + ROWS + " " + expectedSum,
        "format npy",
        "modules dev.sluice.operators dev.sluice.io",
        "internal to this program false",
        "internal to dev.sluice.io true");
  }

  private static Path location(Class<?> c) throws URISyntaxException {
    return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
  }
}
