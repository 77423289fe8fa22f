package dev.sluice.io.npy;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.DatasetException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.testing.NoLeaks;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Every bad input of the issue gives a typed exception naming the file and the problem. */
@ExtendWith(NoLeaks.class)
class NpyBadInputTest {
  @TempDir Path dir;

  private static final String GOOD = NpyFiles.dict("<f4", false, 10, 4);

  private <T extends DatasetException> T fails(Class<T> type, Path p, String... fragments) {
    T e = assertThrows(type, () -> {
      try (NpyDataset ds = Npy.open(p)) {
        ds.get(0); // a stack with metadata.json checks its chunks on the first read
      }
    });
    assertTrue(e.getMessage().contains(p.getFileName().toString()) || e.resource().contains(p.getFileName().toString()),
        "names the file: " + e.getMessage());
    for (String f : fragments) {
      assertTrue(e.getMessage().contains(f), "'" + f + "' in: " + e.getMessage());
    }
    return e;
  }

  @Test
  void truncatedData() throws Exception {
    Path p = NpyFiles.write(dir.resolve("t.npy"), NpyFiles.header(1, GOOD), new byte[100]);
    fails(DatasetFormatException.class, p, "truncated data", "160 bytes", "only 100 bytes");
  }

  @Test
  void fileLongerThanTheHeaderSays() throws Exception {
    Path p = NpyFiles.write(dir.resolve("long.npy"), NpyFiles.header(1, GOOD), new byte[170]);
    fails(DatasetFormatException.class, p, "160 bytes", "170 bytes follow the header");
  }

  @Test
  void cutInsideItsHeader() throws Exception {
    byte[] h = NpyFiles.header(1, GOOD);
    Path p1 = NpyFiles.write(dir.resolve("cut1.npy"), Arrays.copyOf(h, 30), new byte[0]);
    fails(DatasetFormatException.class, p1, "cut inside its header");
    Path p2 = NpyFiles.write(dir.resolve("cut2.npy"), Arrays.copyOf(h, 8), new byte[0]);
    fails(DatasetFormatException.class, p2, "cut inside its header");
    Path p3 = NpyFiles.write(dir.resolve("cut3.npy"), Arrays.copyOf(h, 3), new byte[0]);
    fails(DatasetFormatException.class, p3, "cut inside its header");
  }

  @Test
  void controlCharactersInAMalformedHeaderStayOnOneLine() throws Exception {
    String dict = "{'descr': '<f4'\r\n\u0001, 'fortran_order': False, 'shape': (10, 4), }";
    Path p = NpyFiles.write(dir.resolve("cr.npy"), NpyFiles.header(1, dict), new byte[160]);
    DatasetFormatException e = fails(DatasetFormatException.class, p, "malformed header dict", "\\x0d\\x0a");
    assertTrue(e.getMessage().lines().count() == 1 && e.getMessage().chars().noneMatch(c -> c < 0x20),
        "one line of printable characters: " + e.getMessage());
  }

  @Test
  void badMagic() throws Exception {
    Path p = NpyFiles.write(dir.resolve("bad.npy"), "PK\u0003\u0004 not numpy at all".getBytes(), new byte[0]);
    fails(DatasetFormatException.class, p, "bad magic", "\\x50\\x4b");
  }

  @Test
  void unknownHeaderVersion() throws Exception {
    byte[] h = NpyFiles.header(2, GOOD);
    h[6] = 4;
    Path p = NpyFiles.write(dir.resolve("v4.npy"), h, new byte[160]);
    fails(DatasetFormatException.class, p, "unknown header version 4.0");
  }

  @Test
  void malformedHeaderDicts() throws Exception {
    String[] dicts = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (10, 4), ",
      "{'descr': '<f4', 'fortran_order': False}",
      "{'descr': '<f4', 'fortran_order': 'no', 'shape': (10, 4), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (10, -4), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (10, 4), 'extra': 1}",
      "__import__('os').system('echo pwned')",
      "[1, 2, 3]",
    };
    for (int i = 0; i < dicts.length; i++) {
      Path p = NpyFiles.write(dir.resolve("m" + i + ".npy"), NpyFiles.header(1, dicts[i]), new byte[160]);
      fails(DatasetFormatException.class, p, "malformed header");
    }
  }

  @Test
  void objectAndUnsupportedDtypesAreRefused() throws Exception {
    Path obj = NpyFiles.write(dir.resolve("obj.npy"), NpyFiles.header(1, NpyFiles.dict("|O", false, 3)),
        new byte[] {(byte) 0x80, 4, (byte) 0x95, 0, 0, 0});
    fails(UnsupportedFormatException.class, obj, "pickled", "never unpickles");
    Path structObj = NpyFiles.write(dir.resolve("sobj.npy"),
        NpyFiles.header(1, "{'descr': [('a', '<f4'), ('b', '|O')], 'fortran_order': False, 'shape': (1,), }"), new byte[12]);
    fails(UnsupportedFormatException.class, structObj, "field 'b'", "never unpickles");
    Path str = NpyFiles.write(dir.resolve("str.npy"), NpyFiles.header(1, NpyFiles.dict("<U5", false, 2)), new byte[40]);
    fails(UnsupportedFormatException.class, str, "fixed-width strings");
    Path ld = NpyFiles.write(dir.resolve("ld.npy"), NpyFiles.header(1, NpyFiles.dict("<f16", false, 2)), new byte[32]);
    fails(UnsupportedFormatException.class, ld, "long double");
  }

  @Test
  void aShapeOfMoreBytesThanAFileCanHoldNamesTheShape() throws Exception {
    Path p = NpyFiles.write(dir.resolve("x.npy"), NpyFiles.header(1, NpyFiles.dict("<f4", false,
        4611686018427387904L, 8)), new byte[32]);
    fails(DatasetFormatException.class, p, "header shape (4611686018427387904, 8) of float32 is 147573952589676412928"
        + " bytes, more than a file can hold");
    Path oneDim = NpyFiles.write(dir.resolve("y.npy"), NpyFiles.header(1, NpyFiles.dict("<f8", false,
        Long.MAX_VALUE / 4)), new byte[32]);
    fails(DatasetFormatException.class, oneDim, "header shape (" + Long.MAX_VALUE / 4 + ",) of float64 is");
    // the product of the dimensions after the first overflows on its own
    Path rows = NpyFiles.write(dir.resolve("z.npy"), NpyFiles.header(1, NpyFiles.dict("<i2", false,
        0, 1L << 40, 1L << 40)), new byte[0]);
    fails(DatasetFormatException.class, rows, "header shape (0, 1099511627776, 1099511627776) of int16 has rows of"
        + " 2417851639229258349412352 bytes, more than a file can hold");
  }

  @Test
  void aStructuredItemOfMoreBytesThanAnIntIsRefused() throws Exception {
    Path p = NpyFiles.write(dir.resolve("s.npy"), NpyFiles.header(1, "{'descr': [('a', '<f4', (1073741824, 4))],"
        + " 'fortran_order': False, 'shape': (1,), }"), new byte[16]);
    fails(DatasetFormatException.class, p, "structured descr entry", "more than 2147483647 bytes");
  }
}
