package dev.sluice.operators.internal.cache;

import dev.sluice.operators.CacheException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The JVM flags the cache's index (Chronicle Map) needs, and a check that this JVM has them. */
public final class JvmFlags {
  /** The flags, as a user passes them to {@code java}. */
  public static final String CHRONICLE = "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED"
      + " --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED"
      + " --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED"
      + " --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED"
      + " --add-opens=java.base/java.nio=ALL-UNNAMED";

  private JvmFlags() {}

  /**
   * @throws CacheException naming the missing flags when this JVM lacks one, or the JDK compiler
   *     Chronicle Map generates its code with
   */
  public static void check(String resource) {
    Module me = JvmFlags.class.getModule();
    Module base = Object.class.getModule();
    List<String> missing = new ArrayList<>();
    if (!base.isExported("sun.nio.ch", me)) {
      missing.add("--add-exports=java.base/sun.nio.ch=ALL-UNNAMED");
    }
    if (!base.isOpen("java.lang", me)) {
      missing.add("--add-opens=java.base/java.lang=ALL-UNNAMED");
    }
    if (!base.isOpen("java.lang.reflect", me)) {
      missing.add("--add-opens=java.base/java.lang.reflect=ALL-UNNAMED");
    }
    Optional<Module> compiler = ModuleLayer.boot().findModule("jdk.compiler");
    if (compiler.isEmpty()) {
      throw new CacheException(resource, "the cache's index (Chronicle Map) compiles code at run time and needs a full"
          + " JDK, but this Java runtime has no jdk.compiler module", null);
    }
    if (!compiler.get().isExported("com.sun.tools.javac.file", me)) {
      missing.add("--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED");
    }
    if (!missing.isEmpty()) {
      throw new CacheException(resource, "the cache's index (Chronicle Map) needs the JVM flags " + String.join(" ",
          missing) + " (all of them: " + CHRONICLE + "); the sluice jar's manifest carries them", null);
    }
  }
}
