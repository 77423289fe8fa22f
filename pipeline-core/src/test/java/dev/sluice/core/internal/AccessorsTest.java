package dev.sluice.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.DType;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Tensor;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The accessors between dev.sluice.core and its SPI: there whichever class of either is used first. */
class AccessorsTest {

  /** Allocates from a pool, builds a nested value and releases: every path through both accessors. */
  public static final class Probe implements Callable<String> {
    @Override
    public String call() {
      MemoryManager m = new MemoryManager(0);
      try (var buffer = m.pool("probe").allocate(100)) {
        buffer.buffer().putLong(0, 7L);
      }
      Tensor list = Tensor.listOf(DType.INT64, List.of(Tensor.of(new long[] {1, 2}), Tensor.of(new long[] {3})));
      return list.shape() + " " + m.pool("probe").outstandingBytes();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"dev.sluice.core.MemoryManager", "dev.sluice.core.spi.BufferPool", "dev.sluice.core.spi.BatchBuilder",
      "dev.sluice.core.Tensor", "dev.sluice.core.internal.CoreAccess", "dev.sluice.core.internal.SpiAccess"})
  void eitherSideMayBeInitializedFirst(String first) throws Exception {
    URL[] classes = {
        MemoryManager.class.getProtectionDomain().getCodeSource().getLocation(),
        AccessorsTest.class.getProtectionDomain().getCodeSource().getLocation()};
    try (URLClassLoader fresh = new URLClassLoader(classes, ClassLoader.getPlatformClassLoader())) {
      Class.forName(first, true, fresh);
      Class<?> probe = Class.forName(Probe.class.getName(), true, fresh);
      assertThat(probe.getClassLoader()).isSameAs(fresh);
      Callable<?> call = (Callable<?>) probe.getDeclaredConstructor().newInstance();
      String expected = new Probe().call();
      assertThat(expected).endsWith(" 0");
      assertThat(call.call()).isEqualTo(expected);
    }
  }

  @Test
  void eachIsRegisteredOnce() {
    assertThatThrownBy(() -> CoreAccess.register(CoreAccess.get())).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> SpiAccess.register(SpiAccess.get())).isInstanceOf(IllegalStateException.class);
  }
}
