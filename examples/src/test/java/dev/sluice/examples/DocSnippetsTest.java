package dev.sluice.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code ```java} block of {@code README.md} and {@code docs/**}{@code /*.md} compiles against the
 * project's classes.
 *
 * <p>A block that declares a top-level type is a whole compilation unit and must carry its own imports,
 * as a reader copies it. Any other block is a fragment: its leading {@code import} lines are kept, and
 * the rest becomes the body of a method that may throw, in a class that imports {@code dev.sluice.core},
 * {@code dev.sluice.operators}, {@code dev.sluice.io} and its format packages, {@code
 * reactor.core.publisher}, {@code java.nio.file}, {@code java.time} and {@code java.util}, and that
 * declares the reader's own objects the documentation takes as given ({@link #GIVEN}). A block whose
 * fence reads {@code ```java no-compile} is skipped. All blocks are compiled in one run of the system
 * Java compiler against the test class path; a failure names the page, the line in it and the
 * compiler's message.
 */
class DocSnippetsTest {
  /** The fence marker that exempts a block. */
  static final String NO_COMPILE = "no-compile";

  /** What fragments may use without declaring it: a context, a pipeline, paths, a training step. */
  static final List<String> GIVEN = List.of(
      "PipelineContext ctx;",
      "Pipeline<Batch> train;",
      "Path file;",
      "Path dir;",
      "long steps;",
      "void step(Batch batch) {}");

  private static final Pattern OPEN = Pattern.compile("^(\\s*)```java(?:\\s+(.*))?$");
  private static final Pattern CLOSE = Pattern.compile("^\\s*```\\s*$");
  private static final Pattern TYPE = Pattern.compile(
      "^(?:public\\s+|final\\s+|abstract\\s+|sealed\\s+)*(?:class|interface|record|enum)\\s+(\\w+)", Pattern.MULTILINE);
  private static final Pattern IMPORT = Pattern.compile("^import\\s+(static\\s+)?[\\w.*]+\\s*;\\s*(//.*)?$");

  /** One fenced block: where it is, and its text without the fence. */
  record Block(Path file, int fenceLine, String info, List<String> lines) {
    String where(Path root) {
      return root.relativize(file) + ":" + fenceLine;
    }
  }

  /** A block as Java source: the generated text and the line of its first block line there. */
  record Unit(Block block, String pkg, String className, String source, int firstLine) {}

  private static Path root;
  private static List<Block> blocks;
  private static final List<Unit> UNITS = new ArrayList<>();
  private static final List<Diagnostic<? extends JavaFileObject>> DIAGNOSTICS = new ArrayList<>();

  @BeforeAll
  static void compileAll(@TempDir Path out) throws IOException {
    root = repositoryRoot();
    blocks = javaBlocks(root);
    for (int i = 0; i < blocks.size(); i++) {
      if (!blocks.get(i).info().contains(NO_COMPILE)) {
        UNITS.add(unit(blocks.get(i), "snippet" + i));
      }
    }
    DIAGNOSTICS.addAll(compile(UNITS, out));
  }

  /** The compiler's diagnostics for {@code units}, compiled together into {@code out}. */
  static List<Diagnostic<? extends JavaFileObject>> compile(List<Unit> units, Path out) throws IOException {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertThat(javac).as("a JDK's compiler (a JRE has none)").isNotNull();
    DiagnosticCollector<JavaFileObject> collector = new DiagnosticCollector<>();
    try (StandardJavaFileManager files = javac.getStandardFileManager(collector, Locale.ROOT, StandardCharsets.UTF_8)) {
      List<JavaFileObject> sources = units.stream().map(DocSnippetsTest::source).collect(Collectors.toList());
      List<String> options = List.of("-proc:none", "-implicit:none", "-nowarn", "-Xmaxerrs", "10000",
          "-classpath", System.getProperty("java.class.path"), "-d", out.toString());
      javac.getTask(null, files, collector, options, null, sources).call();
    }
    return collector.getDiagnostics();
  }

  @Test
  void aBrokenBlockIsReportedWithItsPageLineAndMessageAndNoCompileSkipsOne(@TempDir Path docs) throws IOException {
    Files.createDirectories(docs.resolve("docs/formats"));
    Files.writeString(docs.resolve("README.md"), String.join("\n",
        "# A page", "", "```java", "Pipeline<Batch> p = Pipeline.from(Datasets.range(10)).batch(4);",
        "p.options().metrics(ctx);", "```", "", "```java no-compile", "Pipeline.from(data)...", "```", ""));
    Files.writeString(docs.resolve("docs/formats/f.md"), String.join("\n",
        "```java", "import java.util.function.LongUnaryOperator;", "", "LongUnaryOperator twice = x -> 2 * x;", "```", ""));
    List<Block> found = javaBlocks(docs);
    assertThat(found).extracting(Block::fenceLine).containsExactly(3, 8, 1);
    assertThat(found.get(1).info()).isEqualTo(NO_COMPILE);

    Unit broken = unit(found.get(0), "broken");
    Unit fine = unit(found.get(2), "fine");
    List<Diagnostic<? extends JavaFileObject>> diagnostics = compile(List.of(broken, fine), docs.resolve("out"));
    List<String> errors = diagnostics.stream().filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
        .map(d -> describe(docs, broken, d)).collect(Collectors.toList());
    assertThat(errors).singleElement().asString()
        .startsWith("README.md:5: ").contains("metrics");
  }

  @Test
  void findsTheDocumentationsJavaBlocks() {
    assertThat(blocks).as("java blocks in README.md and docs/").hasSizeGreaterThan(5);
    assertThat(blocks.stream().filter(b -> b.file().endsWith("README.md"))).isNotEmpty();
  }

  @Test
  void noCompilerErrorOutsideTheBlocks() {
    List<String> stray = DIAGNOSTICS.stream()
        .filter(d -> d.getKind() == Diagnostic.Kind.ERROR && owner(d) == null)
        .map(d -> d.getMessage(Locale.ROOT)).collect(Collectors.toList());
    assertThat(stray).isEmpty();
  }

  @TestFactory
  Stream<DynamicTest> everyJavaBlockCompiles() {
    return UNITS.stream().map(unit -> DynamicTest.dynamicTest(unit.block().where(root), () -> {
      List<String> errors = DIAGNOSTICS.stream()
          .filter(d -> d.getKind() == Diagnostic.Kind.ERROR && owner(d) == unit)
          .map(d -> describe(root, unit, d)).collect(Collectors.toList());
      assertThat(errors).as("compiler errors in the java block at %s", unit.block().where(root)).isEmpty();
    }));
  }

  /** {@code <page>:<line>: <compiler message>} for a diagnostic of {@code unit}. */
  static String describe(Path root, Unit unit, Diagnostic<? extends JavaFileObject> d) {
    long line = d.getLineNumber() - unit.firstLine();
    String at = line >= 0 && line < unit.block().lines().size()
        ? root.relativize(unit.block().file()) + ":" + (unit.block().fenceLine() + 1 + line)
        : unit.block().where(root) + " (generated line " + d.getLineNumber() + ")";
    return at + ": " + d.getMessage(Locale.ROOT);
  }

  private static Unit owner(Diagnostic<? extends JavaFileObject> d) {
    if (d.getSource() == null) {
      return null;
    }
    String uri = d.getSource().toUri().toString();
    return UNITS.stream().filter(u -> uri.endsWith("/" + u.pkg() + "/" + u.className() + ".java")).findFirst().orElse(null);
  }

  private static JavaFileObject source(Unit unit) {
    return new SimpleJavaFileObject(
        java.net.URI.create("string:///" + unit.pkg() + "/" + unit.className() + ".java"), JavaFileObject.Kind.SOURCE) {
      @Override
      public CharSequence getCharContent(boolean ignoreEncodingErrors) {
        return unit.source();
      }
    };
  }

  static Unit unit(Block block, String pkg) {
    String text = String.join("\n", block.lines());
    Matcher type = TYPE.matcher(text);
    if (type.find()) {
      // a compilation unit: compiled as written, in a package of its own
      String body = text.replaceFirst("(?m)^package\\s+[\\w.]+\\s*;", "");
      return new Unit(block, pkg, type.group(1), "package " + pkg + "; " + body + "\n", 1);
    }
    List<String> imports = new ArrayList<>();
    int first = 0;
    while (first < block.lines().size()
        && (block.lines().get(first).isBlank() || IMPORT.matcher(block.lines().get(first).trim()).matches())) {
      imports.add(block.lines().get(first));
      first++;
    }
    StringBuilder source = new StringBuilder("package ").append(pkg).append(";\n");
    for (String p : defaultImports()) {
      source.append("import ").append(p).append(".*;\n");
    }
    source.append(String.join("\n", imports)).append('\n');
    source.append("class Snippet {\n");
    GIVEN.forEach(g -> source.append("  ").append(g).append('\n'));
    source.append("  void snippet() throws Exception {\n");
    int firstLine = (int) source.chars().filter(c -> c == '\n').count() + 1 - first;
    for (String line : block.lines().subList(first, block.lines().size())) {
      source.append(line).append('\n');
    }
    source.append("  }\n}\n");
    return new Unit(block, pkg, "Snippet", source.toString(), firstLine);
  }

  static List<String> defaultImports() {
    List<String> packages = new ArrayList<>(List.of("dev.sluice.core", "dev.sluice.operators", "dev.sluice.io",
        "reactor.core.publisher", "java.nio.file", "java.time", "java.util"));
    Path io = root.resolve("pipeline-io/src/main/java/dev/sluice/io");
    try (Stream<Path> formats = Files.list(io)) {
      formats.filter(Files::isDirectory).map(p -> p.getFileName().toString())
          .filter(name -> !name.equals("internal")).sorted().forEach(name -> packages.add("dev.sluice.io." + name));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return packages;
  }

  static Path repositoryRoot() {
    Path dir = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
    for (Path p = dir; p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("README.md")) && Files.isDirectory(p.resolve("docs"))
          && Files.isDirectory(p.resolve("pipeline-core"))) {
        return p;
      }
    }
    throw new IllegalStateException("no repository root (README.md, docs/, pipeline-core/) above " + dir);
  }

  static List<Block> javaBlocks(Path root) throws IOException {
    List<Path> pages = new ArrayList<>();
    pages.add(root.resolve("README.md"));
    try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted(Comparator.naturalOrder()).forEach(pages::add);
    }
    List<Block> found = new ArrayList<>();
    for (Path page : pages) {
      List<String> lines = Files.readAllLines(page, StandardCharsets.UTF_8);
      for (int i = 0; i < lines.size(); i++) {
        Matcher open = OPEN.matcher(lines.get(i));
        if (!open.matches()) {
          continue;
        }
        int indent = open.group(1).length();
        int end = i + 1;
        while (end < lines.size() && !CLOSE.matcher(lines.get(end)).matches()) {
          end++;
        }
        assertThat(end).as("%s:%d: a java block that is never closed", root.relativize(page), i + 1)
            .isLessThan(lines.size());
        List<String> body = new ArrayList<>();
        for (String line : lines.subList(i + 1, end)) {
          body.add(line.length() >= indent && line.substring(0, indent).isBlank() ? line.substring(indent) : line);
        }
        found.add(new Block(page, i + 1, open.group(2) == null ? "" : open.group(2), body));
        i = end;
      }
    }
    return found;
  }
}
