package dev.sluice.examples.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Standard error with the lines that begin with {@code "SLF4J: "} left out: the AWS SDK bundle that
 * {@code s3a://} needs carries its own shaded SLF4J 1.7, which reports on every run that it found no
 * logger binding, and the CLI's contract is one {@code sluice: } line per error. Every other byte
 * passes through in order; a line (ended by {@code \n} or {@code \r}, as a progress bar redraws it)
 * is held only until its first seven bytes tell whether it is such a notice.
 */
final class ForeignNoticeFilter extends OutputStream {
  private static final byte[] PREFIX = "SLF4J: ".getBytes(StandardCharsets.US_ASCII);

  private final OutputStream out;
  private final byte[] head = new byte[PREFIX.length];
  private int held; // bytes of the current line held in head, while they match PREFIX
  private boolean dropping; // the current line is a notice
  private boolean passing; // the current line is not a notice

  ForeignNoticeFilter(OutputStream out) {
    this.out = out;
  }

  @Override
  public synchronized void write(int b) throws IOException {
    if (dropping || passing) {
      if (!dropping) {
        out.write(b);
      }
      if (b == '\n' || b == '\r') {
        dropping = false;
        passing = false;
      }
      return;
    }
    if (b == PREFIX[held]) {
      head[held++] = (byte) b;
      if (held == PREFIX.length) {
        held = 0;
        dropping = true;
      }
      return;
    }
    out.write(head, 0, held);
    held = 0;
    out.write(b);
    passing = b != '\n' && b != '\r';
  }

  @Override
  public synchronized void write(byte[] b, int off, int len) throws IOException {
    for (int i = off; i < off + len; i++) {
      write(b[i]);
    }
  }

  @Override
  public synchronized void flush() throws IOException {
    out.flush();
  }

  /** Writes what is held of an unfinished line, then closes the stream underneath. */
  @Override
  public synchronized void close() throws IOException {
    out.write(head, 0, held);
    held = 0;
    out.close();
  }
}
