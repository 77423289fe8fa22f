package dev.sluice.operators.internal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The class Chronicle Map would compile at run time is on the class path, equal to what the
 * generator of the Chronicle version in use emits, and the one Chronicle loads.
 */
class PrecompiledIndexCodeTest {
  private static final String STATE = "net.openhft.chronicle.hash.VanillaGlobalMutableState";

  @Test
  void theShippedSourceIsWhatChronicleValuesGenerates() throws Exception {
    Class<?> state = Class.forName(STATE);
    Class<?> model = Class.forName("net.openhft.chronicle.values.ValueModel");
    Method acquire = model.getDeclaredMethod("acquire", Class.class);
    acquire.setAccessible(true);
    Method simpleName = model.getDeclaredMethod("simpleName", Class.class);
    simpleName.setAccessible(true);
    Method generate = Class.forName("net.openhft.chronicle.values.Generators")
        .getDeclaredMethod("generateNativeClass", model, String.class);
    generate.setAccessible(true);
    String expected = (String) generate.invoke(null, acquire.invoke(null, state),
        simpleName.invoke(null, state) + "$$Native");

    Path source = Path.of("src/main/java/net/openhft/chronicle/hash/VanillaGlobalMutableState$$Native.java");
    String shipped = Files.readString(source, StandardCharsets.UTF_8);
    int docStart = shipped.indexOf("/**");
    int docEnd = shipped.indexOf("*/", docStart) + 3; // the comment and its line break
    assertEquals(expected, shipped.substring(0, docStart) + shipped.substring(docEnd),
        source + " differs from what Chronicle Values generates: replace its code by the generator's output");
  }

  @Test
  void chronicleLoadsThePrecompiledClass() throws Exception {
    Class<?> values = Class.forName("net.openhft.chronicle.values.Values");
    Class<?> nativeClass = (Class<?>) values.getMethod("nativeClassFor", Class.class)
        .invoke(null, Class.forName(STATE));
    assertSame(Class.forName(STATE + "$$Native"), nativeClass);
  }
}
