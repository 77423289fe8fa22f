/**
 * {@code Pipeline}, the fluent tf.data-style API, its operators, the planner and the shared cache.
 *
 * <p>Only {@code dev.sluice.operators} is exported. The module reads {@code dev.sluice.core}
 * transitively. Chronicle Map, the shared cache's index, is optional: without it on the module
 * path, {@code Pipeline.cache} throws a {@code MissingDependencyException} naming it. The same
 * jar works unchanged on the class path.
 */
module dev.sluice.operators {
  requires transitive dev.sluice.core;
  requires reactor.core.micrometer;
  requires org.slf4j;

  requires static chronicle.map;
  requires static chronicle.bytes;
  requires static chronicle.values;
  requires static posix;

  exports dev.sluice.operators;
}
