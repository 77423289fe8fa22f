package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ForeignNoticeFilterTest {
  private static String through(String written) throws IOException {
    ByteArrayOutputStream sink = new ByteArrayOutputStream();
    try (PrintStream err = new PrintStream(new ForeignNoticeFilter(sink), true, StandardCharsets.UTF_8)) {
      err.print(written);
    }
    return sink.toString(StandardCharsets.UTF_8);
  }

  @Test
  void slf4jNoticesAreLeftOutAndEverythingElsePassesInOrder() throws IOException {
    String notices = "SLF4J: Failed to load class \"org.slf4j.impl.StaticLoggerBinder\".\n"
        + "SLF4J: Defaulting to no-operation (NOP) logger implementation\n";
    assertThat(through(notices + "sluice: s3a://b/x.npy: cannot read its status\n"))
        .isEqualTo("sluice: s3a://b/x.npy: cannot read its status\n");
    assertThat(through("SLF4 almost\nSLF4J:no space\n\n" + notices + "done"))
        .isEqualTo("SLF4 almost\nSLF4J:no space\n\ndone");
    assertThat(through("ends with SLF4\nSLF")).isEqualTo("ends with SLF4\nSLF");
  }

  @Test
  void aProgressBarRedrawnWithCarriageReturnsPassesUnchanged() throws IOException {
    String bar = "\r 10% [#    ]\r 50% [###  ]\r100% [#####]\n";
    assertThat(through(bar)).isEqualTo(bar);
    assertThat(through("S\rSL\rSLF4J: x\rok\n")).isEqualTo("S\rSL\rok\n");
  }
}
