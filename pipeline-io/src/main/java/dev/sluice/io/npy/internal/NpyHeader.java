package dev.sluice.io.npy.internal;

import dev.sluice.core.DType;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Shape;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.internal.mapped.PositionedReader;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The parsed header of one {@code .npy} file (format versions 1.0, 2.0 and 3.0): dtype, memory
 * order, shape and where the data starts. Parsing never evaluates anything and refuses object
 * (pickled) dtypes before any data is touched.
 */
public final class NpyHeader {
  /** {@code \x93NUMPY}. */
  public static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};

  private final String resource;
  private final int major;
  private final int minor;
  private final long dataOffset;
  private final List<NpyField> fields;
  private final int itemSize;
  private final boolean structured;
  private final boolean fortranOrder;
  private final long[] shape;
  private final String descr;

  private NpyHeader(String resource, int major, int minor, long dataOffset, List<NpyField> fields, int itemSize,
      boolean structured, boolean fortranOrder, long[] shape, String descr) {
    this.resource = resource;
    this.major = major;
    this.minor = minor;
    this.dataOffset = dataOffset;
    this.fields = fields;
    this.itemSize = itemSize;
    this.structured = structured;
    this.fortranOrder = fortranOrder;
    this.shape = shape;
    this.descr = descr;
  }

  /** True when {@code head} starts with the npy magic. */
  public static boolean hasMagic(byte[] head, int length) {
    if (length < MAGIC.length) {
      return false;
    }
    for (int i = 0; i < MAGIC.length; i++) {
      if (head[i] != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * Reads and checks the header of {@code channel}; {@code fieldName} names the array's field when
   * its dtype is not structured. Checks the file length against shape × dtype before anything is
   * mapped.
   */
  public static NpyHeader read(String resource, FileChannel channel, String fieldName) throws IOException {
    return read(resource, channel::read, channel.size(), fieldName);
  }

  /**
   * {@link #read(String, FileChannel, String)} from any positioned reader (a remote file) of
   * {@code fileSize} bytes.
   */
  public static NpyHeader read(String resource, PositionedReader channel, long fileSize, String fieldName)
      throws IOException {
    ByteBuffer pre = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
    readFully(channel, pre, 0);
    int got = pre.position();
    byte[] head = Arrays.copyOf(pre.array(), got);
    if (!hasMagic(head, got)) {
      if (got < MAGIC.length && isPrefixOfMagic(head, got)) {
        throw new DatasetFormatException(resource, "byte " + got,
            "file cut inside its header: " + fileSize + " bytes, expected at least 10");
      }
      throw new DatasetFormatException(resource, "byte 0",
          "bad magic: expected \\x93NUMPY but found " + hex(head, Math.min(got, 6)) + "; not an .npy file");
    }
    if (got < 10) {
      throw new DatasetFormatException(resource, "byte " + got,
          "file cut inside its header: " + fileSize + " bytes, expected at least 10");
    }
    int major = head[6] & 0xff;
    int minor = head[7] & 0xff;
    if ((major != 1 && major != 2 && major != 3) || minor != 0) {
      throw new DatasetFormatException(resource, "byte 6",
          "unknown header version " + major + "." + minor + "; expected 1.0, 2.0 or 3.0");
    }
    long headerLen;
    int lenEnd;
    if (major == 1) {
      headerLen = pre.getShort(8) & 0xffff;
      lenEnd = 10;
    } else {
      if (got < 12) {
        throw new DatasetFormatException(resource, "byte " + got,
            "file cut inside its header: " + fileSize + " bytes, expected at least 12");
      }
      headerLen = pre.getInt(8) & 0xffffffffL;
      lenEnd = 12;
    }
    long dataOffset = lenEnd + headerLen;
    if (fileSize < dataOffset) {
      throw new DatasetFormatException(resource, "byte " + fileSize,
          "file cut inside its header: the header says " + headerLen + " header bytes after byte " + lenEnd
              + " but the file has " + fileSize + " bytes");
    }
    if (headerLen > (1 << 24)) {
      throw new DatasetFormatException(resource, "byte 8", "header length " + headerLen + " is implausibly large");
    }
    ByteBuffer hb = ByteBuffer.allocate((int) headerLen);
    readFully(channel, hb, lenEnd);
    String text = new String(hb.array(), 0, hb.position(),
        major == 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
    Object parsed;
    try {
      parsed = PyLiteral.parse(text);
    } catch (IllegalArgumentException e) {
      throw new DatasetFormatException(resource, "header dict",
          "malformed header dict (" + printable(e.getMessage()) + "): " + abbreviate(text));
    }
    if (!(parsed instanceof Map<?, ?> dict)) {
      throw new DatasetFormatException(resource, "header dict",
          "malformed header: expected a dict but found " + abbreviate(text));
    }
    Set<String> keys = new HashSet<>();
    dict.keySet().forEach(k -> keys.add((String) k));
    if (!keys.equals(Set.of("descr", "fortran_order", "shape"))) {
      throw new DatasetFormatException(resource, "header dict",
          "malformed header dict: expected keys [descr, fortran_order, shape] but found " + keys);
    }
    Object fo = dict.get("fortran_order");
    if (!(fo instanceof Boolean fortran)) {
      throw new DatasetFormatException(resource, "header dict",
          "malformed header dict: fortran_order must be True or False but it is " + fo);
    }
    long[] shape = parseShape(resource, dict.get("shape"));
    Object descr = dict.get("descr");
    List<NpyField> fields = new ArrayList<>();
    boolean structured;
    int itemSize;
    if (descr instanceof String s) {
      structured = false;
      NpyField f = simpleField(resource, fieldName, s, Shape.scalar(), 0);
      fields.add(f);
      itemSize = f.byteSize();
    } else if (descr instanceof List<?> list) {
      structured = true;
      itemSize = structuredFields(resource, list, fields);
      if (fields.isEmpty()) {
        throw new UnsupportedFormatException(resource, "header dict", "structured dtype " + descr + " has no fields");
      }
      if (shape.length > 1) {
        throw new UnsupportedFormatException(resource, "header dict", "a structured array of shape "
            + Arrays.toString(shape) + " is not supported; only 0-d and 1-d structured arrays are");
      }
    } else {
      throw new DatasetFormatException(resource, "header dict",
          "malformed header dict: descr must be a string or a list but it is " + descr);
    }
    NpyHeader h = new NpyHeader(resource, major, minor, dataOffset, List.copyOf(fields), itemSize, structured,
        fortran && shape.length > 1, shape, String.valueOf(descr));
    long expected;
    try {
      expected = h.dataBytes();
      Math.addExact(dataOffset, expected); // where the data ends is a file position too
    } catch (ArithmeticException e) {
      BigInteger row = BigInteger.valueOf(itemSize);
      for (int i = 1; i < shape.length; i++) {
        row = row.multiply(BigInteger.valueOf(shape[i]));
      }
      BigInteger bytes = row.multiply(BigInteger.valueOf(h.rows()));
      boolean total = bytes.add(BigInteger.valueOf(dataOffset)).bitLength() > 63;
      throw new DatasetFormatException(resource, null, "header shape " + tuple(shape) + " of " + h.describeItem()
          + (total ? " is " + bytes + " bytes" : " has rows of " + row + " bytes") + ", more than a file can hold");
    }
    long present = fileSize - dataOffset;
    if (present < expected) {
      throw new DatasetFormatException(resource, "byte " + fileSize, "truncated data: header says "
          + h.describeSize() + " (" + expected + " bytes) but only " + present + " bytes follow the header");
    }
    if (present > expected) {
      throw new DatasetFormatException(resource, "byte " + (dataOffset + expected), "header says "
          + h.describeSize() + " (" + expected + " bytes) but " + present
          + " bytes follow the header; files holding more than one array are not supported");
    }
    return h;
  }

  private String describeSize() {
    return Arrays.toString(shape) + " of " + describeItem();
  }

  private String describeItem() {
    return structured ? "structured items of " + itemSize + " bytes"
        : fields.get(0).dtype() + (fields.get(0).bigEndian() ? " (big-endian)" : "");
  }

  /** A shape as NumPy writes it: {@code (4, 8)}, {@code (5,)}, {@code ()}. */
  static String tuple(long[] shape) {
    StringBuilder sb = new StringBuilder("(");
    for (int i = 0; i < shape.length; i++) {
      sb.append(i == 0 ? "" : ", ").append(shape[i]);
    }
    return sb.append(shape.length == 1 ? ",)" : ")").toString();
  }

  private static boolean isPrefixOfMagic(byte[] head, int got) {
    for (int i = 0; i < got; i++) {
      if (head[i] != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  private static void readFully(PositionedReader ch, ByteBuffer b, long position) throws IOException {
    long p = position;
    while (b.hasRemaining()) {
      int n = ch.read(b, p);
      if (n < 0) {
        return;
      }
      p += n;
    }
  }

  private static long[] parseShape(String resource, Object shapeValue) {
    if (!(shapeValue instanceof List<?> dims)) {
      throw new DatasetFormatException(resource, "header dict",
          "malformed header dict: shape must be a tuple of integers but it is " + shapeValue);
    }
    long[] shape = new long[dims.size()];
    for (int i = 0; i < shape.length; i++) {
      if (!(dims.get(i) instanceof Long d) || d < 0) {
        throw new DatasetFormatException(resource, "header dict",
            "malformed header dict: shape must be a tuple of integers >= 0 but it is " + dims);
      }
      shape[i] = d;
    }
    return shape;
  }

  private static int structuredFields(String resource, List<?> list, List<NpyField> out) {
    int offset = 0;
    Set<String> names = new HashSet<>();
    for (Object entry : list) {
      if (!(entry instanceof List<?> t) || t.size() < 2 || t.size() > 3) {
        throw new DatasetFormatException(resource, "header dict",
            "malformed structured descr entry " + entry + "; expected (name, dtype) or (name, dtype, shape)");
      }
      Object nameValue = t.get(0);
      if (nameValue instanceof List<?> titled && titled.size() == 2) {
        nameValue = titled.get(1); // (title, name)
      }
      if (!(nameValue instanceof String name)) {
        throw new DatasetFormatException(resource, "header dict", "malformed structured descr entry " + entry);
      }
      Shape sub = Shape.scalar();
      if (t.size() == 3) {
        Object s = t.get(2);
        long[] d = s instanceof Long single ? new long[] {single} : parseShape(resource, s);
        sub = Shape.of(d);
      }
      Object fd = t.get(1);
      if (fd instanceof List<?>) {
        throw new UnsupportedFormatException(resource, "header dict",
            "field '" + name + "' is itself structured; nested structured dtypes are not supported");
      }
      if (!(fd instanceof String fieldDescr)) {
        throw new DatasetFormatException(resource, "header dict", "malformed structured descr entry " + entry);
      }
      try {
        if (name.isEmpty() && fieldDescr.length() > 1 && fieldDescr.substring(1).startsWith("V")) {
          offset = Math.addExact(offset, Math.multiplyExact(parseVoidSize(resource, fieldDescr),
              Math.toIntExact(sub.numElements())));
          continue; // padding
        }
        if (!names.add(name)) {
          throw new DatasetFormatException(resource, "header dict", "duplicate field name '" + name + "'");
        }
        NpyField f = simpleField(resource, name, fieldDescr, sub, offset);
        out.add(f);
        offset = Math.addExact(offset, f.byteSize());
      } catch (ArithmeticException e) {
        throw new DatasetFormatException(resource, "header dict", "structured descr entry " + entry + " makes an item"
            + " of more than " + Integer.MAX_VALUE + " bytes");
      }
    }
    return offset;
  }

  private static int parseVoidSize(String resource, String d) {
    try {
      return Integer.parseInt(d.substring(2));
    } catch (NumberFormatException e) {
      throw new DatasetFormatException(resource, "header dict", "malformed padding descr '" + d + "'");
    }
  }

  /** A field of a simple descr such as {@code <f4}, {@code >i8}, {@code |b1}. */
  static NpyField simpleField(String resource, String name, String descr, Shape sub, int offset) {
    String d = descr.trim();
    if (d.isEmpty()) {
      throw new DatasetFormatException(resource, "header dict", "malformed header dict: empty descr");
    }
    char order = d.charAt(0);
    String rest = d;
    if (order == '<' || order == '>' || order == '|' || order == '=') {
      rest = d.substring(1);
    } else {
      order = '=';
    }
    if (rest.isEmpty()) {
      throw new DatasetFormatException(resource, "header dict", "malformed descr '" + descr + "'");
    }
    char kind = rest.charAt(0);
    int size;
    String sizeText = rest.substring(1);
    if (kind == 'O') {
      throw new UnsupportedFormatException(resource, "header dict", "dtype '" + descr + "'"
          + (name != null && !name.isEmpty() ? " of field '" + name + "'" : "")
          + " is an object array of pickled Python objects; Sluice never unpickles. Convert it to a numeric dtype");
    }
    try {
      size = sizeText.isEmpty() ? -1 : Integer.parseInt(sizeText);
    } catch (NumberFormatException e) {
      throw new UnsupportedFormatException(resource, "header dict", "unsupported dtype '" + descr + "'");
    }
    DType t = switch (kind) {
      case 'b' -> size == 1 ? DType.BOOL : null;
      case 'i' -> switch (size) {
        case 1 -> DType.INT8;
        case 2 -> DType.INT16;
        case 4 -> DType.INT32;
        case 8 -> DType.INT64;
        default -> null;
      };
      case 'u' -> switch (size) {
        case 1 -> DType.UINT8;
        case 2 -> DType.UINT16;
        case 4 -> DType.UINT32;
        case 8 -> DType.UINT64;
        default -> null;
      };
      case 'f' -> switch (size) {
        case 2 -> DType.FLOAT16;
        case 4 -> DType.FLOAT32;
        case 8 -> DType.FLOAT64;
        default -> null;
      };
      case 'c' -> switch (size) {
        case 8 -> DType.COMPLEX64;
        case 16 -> DType.COMPLEX128;
        default -> null;
      };
      case 'V' -> size == 2 ? DType.BFLOAT16 : null;
      default -> null;
    };
    if (t == null) {
      String why = switch (kind) {
        case 'S', 'a', 'U' -> "fixed-width strings are not supported";
        case 'M', 'm' -> "datetime and timedelta are not supported; store them as int64";
        case 'f' -> "only float16, float32 and float64 are supported (not long double)";
        case 'c' -> "only complex64 and complex128 are supported";
        case 'V' -> "raw void items are not supported (only |V2, read as bfloat16)";
        default -> "it is not a numeric dtype Sluice reads";
      };
      throw new UnsupportedFormatException(resource, "header dict", "unsupported dtype '" + descr + "'"
          + (name != null && !name.isEmpty() ? " of field '" + name + "'" : "") + ": " + why);
    }
    boolean big = order == '>' && t.byteSize() > 1;
    return new NpyField(name, t, sub, offset, big);
  }

  private static String hex(byte[] b, int n) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      sb.append(String.format("\\x%02x", b[i] & 0xff));
    }
    return sb.length() == 0 ? "an empty file" : sb.toString();
  }

  /** The header text for a message: at most 200 characters, control characters escaped (one line). */
  private static String abbreviate(String s) {
    String t = s.strip();
    return printable(t.length() > 200 ? t.substring(0, 200) + "..." : t);
  }

  /** {@code t} with control characters and line separators escaped, so a message stays on one line. */
  private static String printable(String t) {
    StringBuilder out = new StringBuilder(t.length());
    for (int i = 0; i < t.length(); i++) {
      char c = t.charAt(i);
      if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)) {
        out.append(String.format(Locale.ROOT, "\\x%02x", (int) c));
      } else if (c == 0x2028 || c == 0x2029) {
        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  public String resource() {
    return resource;
  }

  /** "1.0", "2.0" or "3.0". */
  public String version() {
    return major + "." + minor;
  }

  public long dataOffset() {
    return dataOffset;
  }

  /** The fields (one for a plain dtype; the first is named after the file). */
  public List<NpyField> fields() {
    return fields;
  }

  public int itemSize() {
    return itemSize;
  }

  public boolean isStructured() {
    return structured;
  }

  /** True for Fortran order of rank 2 or more (rank 0 and 1 are the same in both orders). */
  public boolean isFortranOrder() {
    return fortranOrder;
  }

  public long[] shape() {
    return shape.clone();
  }

  /** The descr as written. */
  public String descr() {
    return descr;
  }

  /** Rows: the first dimension, or 1 for a 0-d array. */
  public long rows() {
    return shape.length == 0 ? 1 : shape[0];
  }

  /** Items per row: the product of the dimensions after the first. */
  public long itemsPerRow() {
    long n = 1;
    for (int i = 1; i < shape.length; i++) {
      n = Math.multiplyExact(n, shape[i]);
    }
    return n;
  }

  /** The shape of one row (the array's shape without its first dimension). */
  public Shape rowShape() {
    return shape.length == 0 ? Shape.scalar() : Shape.of(Arrays.copyOfRange(shape, 1, shape.length));
  }

  /** Bytes of one row. */
  public long rowBytes() {
    return Math.multiplyExact(itemsPerRow(), itemSize);
  }

  /** Bytes of data after the header. */
  public long dataBytes() {
    return Math.multiplyExact(rows(), rowBytes());
  }

  /** True when any field is stored big-endian. */
  public boolean hasBigEndian() {
    return fields.stream().anyMatch(NpyField::bigEndian);
  }
}
