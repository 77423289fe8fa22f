package dev.sluice.examples.cli;

import dev.sluice.core.testing.Python;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.testing.NoLeaks;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code generate}, {@code inspect} and {@code checksum} run in-process through picocli. */
@ExtendWith(NoLeaks.class)
class NpyCommandsTest {
  @TempDir Path dir;

  record Run(int exit, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = SluiceCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true)).execute(args);
    return new Run(exit, out.toString(), err.toString());
  }

  static void assertBadInput(Run r, String... fragments) {
    assertEquals(2, r.exit(), r.toString());
    String[] lines = r.err().strip().split("\n");
    assertEquals(1, lines.length, "one line on stderr: " + r.err());
    assertTrue(lines[0].startsWith("sluice: "), lines[0]);
    for (String f : fragments) {
      assertTrue(lines[0].contains(f), "'" + f + "' in: " + lines[0]);
    }
  }

  static final String SCRIPT = """
      import hashlib, json, sys
      import numpy as np
      d = sys.argv[1]
      x = np.load(d + '/x.npy'); label = np.load(d + '/label.npy')
      canon = b''.join(label[i].astype('<i8').tobytes() + x[i].astype('<f4').tobytes() for i in range(len(label)))
      print(json.dumps({'all': hashlib.sha256(canon).hexdigest(),
                        'x': hashlib.sha256(x.astype('<f4').tobytes()).hexdigest(),
                        'x_dtype': x.dtype.name, 'x_shape': list(x.shape), 'label_dtype': label.dtype.name,
                        'labels_are_indices': bool((label == np.arange(len(label))).all())}))
      """;

  @Test
  void generateThenChecksumEqualsNumpy() throws Exception {
    Path d = dir.resolve("d");
    Run g = run("generate", d.toString(), "--rows", "1000", "--dim", "8", "--format", "npy");
    assertEquals(0, g.exit(), g.toString());
    assertTrue(Files.isRegularFile(d.resolve("x.npy")) && Files.isRegularFile(d.resolve("label.npy")));
    Run c = run("checksum", d.toString());
    assertEquals(0, c.exit(), c.toString());
    String sha = c.out().strip();
    assertTrue(sha.matches("[0-9a-f]{64}"), sha);
    assertEquals("", c.err());

    JsonNode np = new ObjectMapper().readTree(Python.run(SCRIPT, d.toString()));
    assertEquals(np.get("all").asText(), sha, "canonical bytes agree with numpy");
    assertEquals(np.get("x").asText(), run("checksum", d.toString(), "--columns", "x").out().strip());
    assertEquals(sha, run("checksum", d.toString(), "--columns", "x,label", "--format", "npy").out().strip(),
        "field order does not matter: canonical order is by name");
    assertEquals("float32", np.get("x_dtype").asText());
    assertEquals(1000, np.get("x_shape").get(0).asInt());
    assertEquals(8, np.get("x_shape").get(1).asInt());
    assertEquals("int64", np.get("label_dtype").asText());
    assertTrue(np.get("labels_are_indices").asBoolean());

    Run other = run("generate", dir.resolve("e").toString(), "--rows", "1000", "--dim", "8", "--seed", "5");
    assertEquals(0, other.exit(), other.toString());
    assertTrue(!sha.equals(run("checksum", dir.resolve("e").toString()).out().strip()), "the seed changes x");
  }

  @Test
  void inspectPrintsFormatFieldsRowsAndSplits() throws Exception {
    Path d = dir.resolve("d");
    assertEquals(0, run("generate", d.toString(), "--rows", "37", "--dim", "4").exit());
    Run r = run("inspect", d.toString());
    assertEquals(0, r.exit(), r.toString());
    JsonNode j = new ObjectMapper().readTree(r.out());
    assertEquals("npy", j.get("format").asText());
    assertEquals(37, j.get("rows").asLong());
    assertEquals("label", j.get("fields").get(0).get("name").asText());
    assertEquals("int64", j.get("fields").get(0).get("dtype").asText());
    assertEquals(0, j.get("fields").get(0).get("shape").size());
    assertEquals("x", j.get("fields").get(1).get("name").asText());
    assertEquals("float32", j.get("fields").get(1).get("dtype").asText());
    assertEquals(4, j.get("fields").get(1).get("shape").get(0).asInt());

    Path stack = dir.resolve("stack");
    Files.createDirectories(stack);
    Files.copy(d.resolve("x.npy"), stack.resolve("0.npy"));
    Files.copy(d.resolve("x.npy"), stack.resolve("1.npy"));
    Run s = run("inspect", stack.toString(), "--format", "npy");
    assertEquals(0, s.exit(), s.toString());
    JsonNode sj = new ObjectMapper().readTree(s.out());
    assertEquals(74, sj.get("rows").asLong());
    assertEquals(2, sj.get("splits").asInt());
  }

  @Test
  void generateRefusesFormatsThatCannotWrite() {
    assertBadInput(run("generate", dir.resolve("p").toString(), "--rows", "3", "--dim", "2", "--format", "no-such-format"),
        "no-such-format");
    assertBadInput(run("generate", dir.resolve("p").toString(), "--rows", "3", "--dim", "0"), "--dim");
  }

  @Test
  void badInputExitsTwoWithOneLine() throws Exception {
    Path notNpy = Files.writeString(dir.resolve("notes.txt"), "hello");
    assertBadInput(run("checksum", notNpy.toString()), "notes.txt", "not a recognized dataset");
    assertBadInput(run("inspect", notNpy.toString(), "--format", "npy"), "notes.txt", "bad magic");
    assertBadInput(run("inspect", dir.resolve("missing").toString()), "missing", "no such file");

    Path d = dir.resolve("d");
    assertEquals(0, run("generate", d.toString(), "--rows", "100", "--dim", "4").exit());
    assertBadInput(run("checksum", d.toString(), "--columns", "nope"), "nope");
    byte[] x = Files.readAllBytes(d.resolve("x.npy"));
    Files.write(d.resolve("x.npy"), java.util.Arrays.copyOf(x, x.length - 5));
    assertBadInput(run("checksum", d.toString()), "x.npy", "truncated");

    Path stack = dir.resolve("stack");
    Files.createDirectories(stack);
    Files.copy(d.resolve("label.npy"), stack.resolve("0.npy"));
    Files.copy(d.resolve("label.npy"), stack.resolve("2.npy"));
    assertBadInput(run("inspect", stack.toString()), "missing chunk 1.npy");
  }

  @Test
  void aHeaderShapeOfMoreBytesThanAFileCanHoldExitsTwoNamingTheShape() throws Exception {
    String dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }";
    int total = (10 + dict.length() + 1 + 63) / 64 * 64;
    String header = dict + " ".repeat(total - 10 - dict.length() - 1) + "\n";
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(total + 32).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0}).putShort((short) header.length())
        .put(header.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
    Path x = Files.write(dir.resolve("x.npy"), b.array());
    for (String command : new String[] {"read", "inspect", "checksum"}) {
      assertBadInput(run(command, x.toString()), "x.npy", "header shape (4611686018427387904, 8) of float32 is"
          + " 147573952589676412928 bytes, more than a file can hold");
    }
  }
}
