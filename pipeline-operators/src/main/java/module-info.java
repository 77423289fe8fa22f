/**
 * {@code Pipeline}, the fluent tf.data-style API, its operators, the planner and the shared cache.
 *
 * <p>Only {@code dev.sluice.operators} is exported. The module reads {@code dev.sluice.core}
 * transitively. Chronicle Map, the shared cache's index, is an optional library, and the cache
 * works on the class path only: the jar also holds a class in Chronicle Map's package
 * {@code net.openhft.chronicle.hash}, which Chronicle Map finds there by name, and on the module
 * path a package belongs to one module only. The same jar works unchanged on the class path.
 */
module dev.sluice.operators {
  requires transitive dev.sluice.core;
  requires reactor.core.micrometer;
  requires org.slf4j;

  // Chronicle Values and OpenHFT's posix have no declared module name to require: this module
  // reads them from the class path, with --add-reads dev.sluice.operators=ALL-UNNAMED
  requires static chronicle.map;
  requires static chronicle.bytes;

  exports dev.sluice.operators;
}
