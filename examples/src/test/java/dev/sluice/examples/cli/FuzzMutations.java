package dev.sluice.examples.cli;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Seeded mutations of one file's bytes: bit flips, zeroed ranges, random byte ranges, truncation,
 * extension, and edits of the fields a reader parses first (an npy header's text and length, a
 * shard's header, block table and tail, Parquet's footer length and footer bytes, Arrow's message
 * metadata lengths and footer length, {@code metadata.json} values).
 */
final class FuzzMutations {
  private FuzzMutations() {}

  /** The kinds of mutation. */
  enum Op { BIT_FLIP, ZERO_RANGE, RANDOM_RANGE, TRUNCATE, EXTEND, FIELD_EDIT }

  /** The mutated bytes and a description of what was done, for the failure report. */
  record Mutant(byte[] bytes, Op op, String what) {}

  private static final long[] BOUNDARIES = {0, 1, -1, 7, 8, 63, 64, 0x7fffffffL, 0x80000000L, 0xffffffffL,
      0x100000000L, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 40};

  /**
   * Mutates {@code good}, a file of a seed of {@code kind} named {@code name}: one mutation, and
   * a fifth of the time a second one on top of it.
   */
  static Mutant mutate(byte[] good, String name, FuzzSeeds.Kind kind, SplittableRandom rnd) {
    Mutant m = mutateOnce(good, name, kind, rnd);
    if (rnd.nextInt(5) == 0 && m.bytes().length > 0) {
      Mutant then = mutateOnce(m.bytes(), name, kind, rnd);
      return new Mutant(then.bytes(), m.op(), m.what() + "; then " + then.what());
    }
    return m;
  }

  private static Mutant mutateOnce(byte[] good, String name, FuzzSeeds.Kind kind, SplittableRandom rnd) {
    // metadata.json: half of the mutants keep it valid JSON, so the readers' checks of its values run
    Op op = name.endsWith(".json") && rnd.nextBoolean() ? Op.FIELD_EDIT : Op.values()[rnd.nextInt(Op.values().length)];
    byte[] b = good.clone();
    int n = b.length;
    switch (op) {
      case BIT_FLIP -> {
        int flips = 1 + rnd.nextInt(4);
        StringBuilder what = new StringBuilder("flip bits at");
        for (int i = 0; i < flips; i++) {
          int at = position(n, rnd);
          int bit = rnd.nextInt(8);
          b[at] ^= (byte) (1 << bit);
          what.append(' ').append(at).append('.').append(bit);
        }
        return new Mutant(b, op, what.toString());
      }
      case ZERO_RANGE -> {
        int at = position(n, rnd);
        int len = Math.min(n - at, 1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 256));
        Arrays.fill(b, at, at + len, (byte) 0);
        return new Mutant(b, op, "zero bytes [" + at + ", " + (at + len) + ")");
      }
      case RANDOM_RANGE -> {
        int at = position(n, rnd);
        int len = Math.min(n - at, 1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 128));
        for (int i = 0; i < len; i++) {
          b[at + i] = (byte) rnd.nextInt(256);
        }
        return new Mutant(b, op, "random bytes [" + at + ", " + (at + len) + ")");
      }
      case TRUNCATE -> {
        int keep = rnd.nextBoolean() ? rnd.nextInt(n) : Math.max(0, n - 1 - rnd.nextInt(Math.min(n, 80)));
        return new Mutant(Arrays.copyOf(b, keep), op, "truncate to " + keep + " of " + n + " bytes");
      }
      case EXTEND -> {
        int len = 1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 200);
        boolean zeros = rnd.nextBoolean();
        byte[] e = Arrays.copyOf(b, n + len);
        if (!zeros) {
          for (int i = n; i < e.length; i++) {
            e[i] = (byte) rnd.nextInt(256);
          }
        }
        return new Mutant(e, op, "append " + len + (zeros ? " zero" : " random") + " bytes to " + n);
      }
      case FIELD_EDIT -> {
        return fieldEdit(b, name, kind, rnd);
      }
      default -> throw new AssertionError(op);
    }
  }

  /** Mostly near the start and the end of the file, where the headers and footers are. */
  private static int position(int n, SplittableRandom rnd) {
    if (n <= 1) {
      return 0;
    }
    return switch (rnd.nextInt(4)) {
      case 0 -> rnd.nextInt(Math.min(n, 128));
      case 1 -> n - 1 - rnd.nextInt(Math.min(n, 256));
      default -> rnd.nextInt(n);
    };
  }

  private static Mutant fieldEdit(byte[] b, String name, FuzzSeeds.Kind kind, SplittableRandom rnd) {
    if (name.endsWith(".json")) {
      return json(b, rnd);
    }
    return switch (kind) {
      case NPY, NPY_STACK, DIRECTORY -> npyHeader(b, rnd);
      case SHARDS -> shard(b, rnd);
      case PARQUET -> parquet(b, rnd);
      case ARROW_FILE, ARROW_STREAM -> arrow(b, kind, rnd);
    };
  }

  private static long boundary(long orig, SplittableRandom rnd) {
    return switch (rnd.nextInt(4)) {
      case 0 -> orig + 1;
      case 1 -> orig - 1;
      case 2 -> orig * 2 + 64;
      default -> BOUNDARIES[rnd.nextInt(BOUNDARIES.length)];
    };
  }

  private static Mutant setInt(byte[] b, int at, int width, long value, String field) {
    ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    long orig = width == 8 ? bb.getLong(at) : width == 4 ? Integer.toUnsignedLong(bb.getInt(at)) : bb.getShort(at) & 0xffff;
    if (width == 8) {
      bb.putLong(at, value);
    } else if (width == 4) {
      bb.putInt(at, (int) value);
    } else {
      bb.putShort(at, (short) value);
    }
    return new Mutant(b, Op.FIELD_EDIT, "set " + field + " (" + width + " bytes at " + at + ") from " + orig + " to "
        + (width == 8 ? value : width == 4 ? Integer.toUnsignedLong((int) value) : value & 0xffff));
  }

  private static long getInt(byte[] b, int at, int width) {
    ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    return width == 8 ? bb.getLong(at) : width == 4 ? bb.getInt(at) : bb.getShort(at) & 0xffff;
  }

  private static final Pattern SHAPE = Pattern.compile("'shape': \\(([^)]*)\\)");
  private static final Pattern DESCR = Pattern.compile("'descr': '([^']*)'");
  private static final String[] DESCRS = {"<f8", "<f2", "|u1", ">f4", "<i8", "|b1", "<U4", "|O", "<c16", "|V2",
      "xyz", "<f0", "<i4", "", "<f4<f4"};
  private static final String[] DIMS = {"0", "1", "-1", "2147483648", "9223372036854775807",
      "99999999999999999999", "4611686018427387904", "3, 2", "", "1.5", "x"};

  /** An npy header edit: shape, dtype, fortran_order, the header length field or the version. */
  private static Mutant npyHeader(byte[] b, SplittableRandom rnd) {
    if (b.length < 10) {
      return new Mutant(b, Op.FIELD_EDIT, "no npy header to edit");
    }
    int major = b[6] & 0xff;
    int lenWidth = major == 1 ? 2 : 4;
    int start = 8 + lenWidth;
    int choice = rnd.nextInt(6);
    if (choice == 0) {
      return setInt(b, 8, lenWidth, boundary(getInt(b, 8, lenWidth), rnd), "npy header length");
    }
    if (choice == 1) {
      int v = new int[] {0, 2, 3, 4, 9}[rnd.nextInt(5)];
      b[6] = (byte) v;
      return new Mutant(b, Op.FIELD_EDIT, "set npy major version to " + v);
    }
    int headerLen = (int) getInt(b, 8, lenWidth);
    if (start + headerLen > b.length) {
      return new Mutant(b, Op.FIELD_EDIT, "npy header longer than the file: left as is");
    }
    String text = new String(b, start, headerLen, StandardCharsets.ISO_8859_1);
    String edited;
    String what;
    if (choice == 2 || choice == 3) {
      Matcher m = SHAPE.matcher(text);
      if (!m.find()) {
        return new Mutant(b, Op.FIELD_EDIT, "no shape in the npy header");
      }
      String[] dims = m.group(1).split(",");
      int d = rnd.nextInt(dims.length);
      String dim = DIMS[rnd.nextInt(DIMS.length)];
      dims[d] = dim;
      String shape = String.join(",", dims);
      edited = text.substring(0, m.start(1)) + shape + text.substring(m.end(1));
      what = "npy shape (" + m.group(1) + ") -> (" + shape + ")";
    } else if (choice == 4) {
      Matcher m = DESCR.matcher(text);
      if (!m.find()) {
        return new Mutant(b, Op.FIELD_EDIT, "no descr in the npy header");
      }
      String descr = DESCRS[rnd.nextInt(DESCRS.length)];
      edited = text.substring(0, m.start(1)) + descr + text.substring(m.end(1));
      what = "npy descr '" + m.group(1) + "' -> '" + descr + "'";
    } else {
      edited = text.replace("False", "True");
      what = "npy fortran_order -> True";
    }
    return withHeader(b, start, lenWidth, headerLen, edited, rnd.nextBoolean(), what);
  }

  /** Puts {@code text} in place of the header: padded to the old length when it fits and {@code keepLength}. */
  private static Mutant withHeader(byte[] b, int start, int lenWidth, int headerLen, String text, boolean keepLength,
      String what) {
    String body = text.stripTrailing();
    String header;
    if (keepLength && body.length() + 1 <= headerLen) {
      header = body + " ".repeat(headerLen - body.length() - 1) + "\n";
    } else {
      header = body + "\n";
      keepLength = false;
    }
    byte[] h = header.getBytes(StandardCharsets.ISO_8859_1);
    byte[] out = new byte[b.length - headerLen + h.length];
    System.arraycopy(b, 0, out, 0, start);
    System.arraycopy(h, 0, out, start, h.length);
    System.arraycopy(b, start + headerLen, out, start + h.length, b.length - start - headerLen);
    ByteBuffer bb = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
    if (lenWidth == 2) {
      bb.putShort(8, (short) h.length);
    } else {
      bb.putInt(8, h.length);
    }
    return new Mutant(out, Op.FIELD_EDIT, what + (keepLength ? " (header length kept)" : " (header now " + h.length
        + " bytes, data moved)"));
  }

  /** A shard's header, block table or tail field set to a boundary or neighbouring value. */
  private static Mutant shard(byte[] b, SplittableRandom rnd) {
    int n = b.length;
    if (n < 96) {
      return new Mutant(b, Op.FIELD_EDIT, "shard too short to edit");
    }
    switch (rnd.nextInt(3)) {
      case 0 -> {
        int[][] fields = {{8, 4}, {12, 4}, {16, 8}, {24, 8}, {32, 8}, {60, 4}};
        String[] names = {"header version", "header blocks", "header rows", "header table offset",
            "header file length", "header CRC"};
        int f = rnd.nextInt(fields.length);
        return setInt(b, fields[f][0], fields[f][1], boundary(getInt(b, fields[f][0], fields[f][1]), rnd), names[f]);
      }
      case 1 -> {
        long table = getInt(b, 24, 8);
        long blocks = getInt(b, 12, 4);
        if (table < 64 || table + 24 * blocks > n || blocks <= 0) {
          return new Mutant(b, Op.FIELD_EDIT, "no block table to edit");
        }
        int entry = rnd.nextInt((int) blocks);
        int[][] fields = {{0, 8}, {8, 8}, {16, 4}};
        String[] names = {"offset", "length", "CRC"};
        int f = rnd.nextInt(3);
        int at = (int) table + 24 * entry + fields[f][0];
        return setInt(b, at, fields[f][1], boundary(getInt(b, at, fields[f][1]), rnd),
            "block " + entry + " " + names[f]);
      }
      default -> {
        int[][] fields = {{0, 8}, {8, 8}, {16, 4}, {20, 4}, {24, 4}};
        String[] names = {"tail rows", "tail file length", "tail blocks", "tail version", "tail footer checksum"};
        int f = rnd.nextInt(fields.length);
        int at = n - 32 + fields[f][0];
        return setInt(b, at, fields[f][1], boundary(getInt(b, at, fields[f][1]), rnd), names[f]);
      }
    }
  }

  /** Parquet's footer length, its magic, or a byte of the Thrift footer set to a varint edge. */
  private static Mutant parquet(byte[] b, SplittableRandom rnd) {
    int n = b.length;
    if (n < 12) {
      return new Mutant(b, Op.FIELD_EDIT, "parquet file too short to edit");
    }
    int footerLen = (int) getInt(b, n - 8, 4);
    switch (rnd.nextInt(3)) {
      case 0 -> {
        return setInt(b, n - 8, 4, boundary(footerLen, rnd), "parquet footer length");
      }
      case 1 -> {
        int at = rnd.nextBoolean() ? rnd.nextInt(4) : n - 1 - rnd.nextInt(4);
        b[at] = (byte) (b[at] + 1);
        return new Mutant(b, Op.FIELD_EDIT, "parquet magic byte " + at + " + 1");
      }
      default -> {
        int footerStart = n - 8 - footerLen;
        if (footerLen <= 0 || footerStart < 4) {
          return new Mutant(b, Op.FIELD_EDIT, "no parquet footer to edit");
        }
        int at = footerStart + rnd.nextInt(footerLen);
        int v = new int[] {0x00, 0x7f, 0x80, 0xff, 0x15, 0x19, 0x1c}[rnd.nextInt(7)];
        int orig = b[at] & 0xff;
        b[at] = (byte) v;
        return new Mutant(b, Op.FIELD_EDIT, "parquet footer byte " + at + " from " + orig + " to " + v);
      }
    }
  }

  /** An Arrow message's metadata length (after a continuation marker), the file footer's length, or a buffer length. */
  private static Mutant arrow(byte[] b, FuzzSeeds.Kind kind, SplittableRandom rnd) {
    int n = b.length;
    List<Integer> markers = new ArrayList<>();
    for (int i = 0; i + 8 <= n; i += 8) {
      if (getInt(b, i, 4) == -1) {
        markers.add(i);
      }
    }
    int choice = rnd.nextInt(3);
    if (choice == 0 && kind == FuzzSeeds.Kind.ARROW_FILE && n >= 10) {
      return setInt(b, n - 10, 4, boundary(getInt(b, n - 10, 4), rnd), "arrow file footer length");
    }
    if (choice == 1 && !markers.isEmpty()) {
      int m = markers.get(rnd.nextInt(markers.size()));
      int at = m + 8;
      if (at + 8 <= n) {
        // a little-endian int64 inside the message's metadata: buffer offsets and lengths live there
        int aligned = at + 8 * rnd.nextInt(Math.max(1, Math.min((int) getInt(b, m + 4, 4), n - at) / 8));
        if (aligned + 8 <= n) {
          return setInt(b, aligned, 8, boundary(getInt(b, aligned, 8), rnd), "arrow message metadata word");
        }
      }
    }
    if (markers.isEmpty()) {
      return new Mutant(b, Op.FIELD_EDIT, "no arrow continuation marker");
    }
    int m = markers.get(rnd.nextInt(markers.size()));
    if (m + 8 > n) {
      return new Mutant(b, Op.FIELD_EDIT, "no arrow metadata length");
    }
    return setInt(b, m + 4, 4, boundary(getInt(b, m + 4, 4), rnd), "arrow message metadata length");
  }

  private static final Pattern NUMBER = Pattern.compile("-?\\d+(\\.\\d+)?");
  private static final Pattern STRING = Pattern.compile("\"([^\"]*)\"");
  private static final String[] NUMBERS = {"0", "-1", "1", "2147483648", "9223372036854775807",
      "99999999999999999999999", "1e300", "0.5", "null", "\"7\"", "[]"};
  private static final String[] STRINGS = {"", "int32", "float64", "string", "../metadata.json", "shard-00000.shard",
      "x", "label", "crc32c:00000000", "sluice-shards", "bool", "<f8", "id", "nope"};

  /** A number or string of {@code metadata.json} replaced, or a structural character removed. */
  private static Mutant json(byte[] b, SplittableRandom rnd) {
    String text = new String(b, StandardCharsets.UTF_8);
    int choice = rnd.nextInt(5);
    if (choice <= 1) {
      List<int[]> spans = spans(NUMBER.matcher(text), 0);
      if (!spans.isEmpty()) {
        int[] s = spans.get(rnd.nextInt(spans.size()));
        String orig = text.substring(s[0], s[1]);
        long value = new java.math.BigDecimal(orig).longValue();
        String to = rnd.nextBoolean() ? NUMBERS[rnd.nextInt(NUMBERS.length)] : String.valueOf(value + (rnd.nextBoolean() ? 1 : -1));
        return jsonEdit(text, s, to, "metadata.json number " + orig + " at " + s[0] + " -> " + to);
      }
    }
    if (choice <= 3) {
      List<int[]> spans = spans(STRING.matcher(text), 1);
      if (!spans.isEmpty()) {
        int[] s = spans.get(rnd.nextInt(spans.size()));
        String orig = text.substring(s[0], s[1]);
        String to = STRINGS[rnd.nextInt(STRINGS.length)];
        return jsonEdit(text, s, to, "metadata.json string \"" + orig + "\" at " + s[0] + " -> \"" + to + "\"");
      }
    }
    List<Integer> structural = new ArrayList<>();
    for (int i = 0; i < text.length(); i++) {
      if ("{}[],:".indexOf(text.charAt(i)) >= 0) {
        structural.add(i);
      }
    }
    if (structural.isEmpty()) {
      return new Mutant(b, Op.FIELD_EDIT, "no JSON structure to edit");
    }
    int at = structural.get(rnd.nextInt(structural.size()));
    return jsonEdit(text, new int[] {at, at + 1}, "", "metadata.json '" + text.charAt(at) + "' at " + at + " removed");
  }

  private static List<int[]> spans(Matcher m, int group) {
    List<int[]> spans = new ArrayList<>();
    while (m.find()) {
      spans.add(new int[] {m.start(group), m.end(group)});
    }
    return spans;
  }

  private static Mutant jsonEdit(String text, int[] span, String to, String what) {
    String out = text.substring(0, span[0]) + to + text.substring(span[1]);
    return new Mutant(out.getBytes(StandardCharsets.UTF_8), Op.FIELD_EDIT, what);
  }
}
