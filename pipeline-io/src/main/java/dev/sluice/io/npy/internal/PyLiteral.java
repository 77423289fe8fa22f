package dev.sluice.io.npy.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses the Python literal subset an {@code .npy} header dict uses: dicts, lists, tuples, strings,
 * integers, {@code True}/{@code False}/{@code None}. Lists and tuples both become {@link List}.
 * Nothing is ever evaluated.
 */
final class PyLiteral {
  private final String text;
  private int pos;

  private PyLiteral(String text) {
    this.text = text;
  }

  /** Parses {@code text}; throws {@link IllegalArgumentException} naming the position on error. */
  static Object parse(String text) {
    PyLiteral p = new PyLiteral(text);
    Object v = p.value();
    p.skipSpace();
    if (p.pos != text.length()) {
      throw p.error("unexpected '" + text.charAt(p.pos) + "' after the value");
    }
    return v;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException(what + " at character " + pos);
  }

  private void skipSpace() {
    while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
      pos++;
    }
  }

  private char peek() {
    skipSpace();
    if (pos >= text.length()) {
      throw error("unexpected end");
    }
    return text.charAt(pos);
  }

  private void expect(char c) {
    if (peek() != c) {
      throw error("expected '" + c + "' but found '" + text.charAt(pos) + "'");
    }
    pos++;
  }

  private Object value() {
    char c = peek();
    switch (c) {
      case '{':
        return dict();
      case '[':
        return sequence('[', ']');
      case '(':
        return sequence('(', ')');
      case '\'':
      case '"':
        return string();
      default:
        if (c == '-' || c == '+' || Character.isDigit(c)) {
          return integer();
        }
        return word();
    }
  }

  private Map<String, Object> dict() {
    expect('{');
    Map<String, Object> out = new LinkedHashMap<>();
    while (peek() != '}') {
      Object key = value();
      if (!(key instanceof String k)) {
        throw error("dict key " + key + " is not a string");
      }
      expect(':');
      if (out.put(k, value()) != null) {
        throw error("duplicate key '" + k + "'");
      }
      if (peek() == ',') {
        pos++;
      } else if (peek() != '}') {
        throw error("expected ',' or '}' but found '" + text.charAt(pos) + "'");
      }
    }
    pos++;
    return Collections.unmodifiableMap(out);
  }

  private List<Object> sequence(char open, char close) {
    expect(open);
    List<Object> out = new ArrayList<>();
    while (peek() != close) {
      out.add(value());
      if (peek() == ',') {
        pos++;
      } else if (peek() != close) {
        throw error("expected ',' or '" + close + "' but found '" + text.charAt(pos) + "'");
      }
    }
    pos++;
    return Collections.unmodifiableList(out);
  }

  private String string() {
    char quote = text.charAt(pos++);
    StringBuilder sb = new StringBuilder();
    while (true) {
      if (pos >= text.length()) {
        throw error("unterminated string");
      }
      char c = text.charAt(pos++);
      if (c == quote) {
        return sb.toString();
      }
      if (c != '\\') {
        sb.append(c);
        continue;
      }
      if (pos >= text.length()) {
        throw error("unterminated string");
      }
      char e = text.charAt(pos++);
      switch (e) {
        case 'n' -> sb.append('\n');
        case 't' -> sb.append('\t');
        case 'r' -> sb.append('\r');
        case '0' -> sb.append('\0');
        case 'x' -> sb.append((char) hex(2));
        case 'u' -> sb.append((char) hex(4));
        case 'U' -> sb.appendCodePoint(hex(8));
        default -> sb.append(e);
      }
    }
  }

  private int hex(int digits) {
    if (pos + digits > text.length()) {
      throw error("truncated escape");
    }
    try {
      int v = Integer.parseUnsignedInt(text.substring(pos, pos + digits), 16);
      pos += digits;
      return v;
    } catch (NumberFormatException e) {
      throw error("bad escape");
    }
  }

  private Long integer() {
    int start = pos;
    if (text.charAt(pos) == '-' || text.charAt(pos) == '+') {
      pos++;
    }
    while (pos < text.length() && Character.isDigit(text.charAt(pos))) {
      pos++;
    }
    String digits = text.substring(start, pos);
    if (pos < text.length() && (text.charAt(pos) == 'L' || text.charAt(pos) == 'l')) {
      pos++; // Python 2 long suffix, written by old numpy
    }
    try {
      return Long.parseLong(digits);
    } catch (NumberFormatException e) {
      throw error("bad integer '" + digits + "'");
    }
  }

  private Object word() {
    int start = pos;
    while (pos < text.length() && Character.isLetter(text.charAt(pos))) {
      pos++;
    }
    String w = text.substring(start, pos);
    switch (w) {
      case "True":
        return Boolean.TRUE;
      case "False":
        return Boolean.FALSE;
      case "None":
        return NONE;
      default:
        pos = start;
        throw error("unexpected '" + (w.isEmpty() ? String.valueOf(text.charAt(pos)) : w) + "'");
    }
  }

  /** Python's None. */
  static final Object NONE = new Object() {
    @Override
    public String toString() {
      return "None";
    }
  };
}
