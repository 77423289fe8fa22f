/**
 * Sluice's element model, dataset contracts, pipeline context, options, memory manager and errors.
 *
 * <p>{@code dev.sluice.core} (the API) and {@code dev.sluice.core.spi} (the types only authors of
 * sources and operators use) are exported to every module. The {@code internal} packages are
 * exported only to the other Sluice library modules that build on them. The module reads
 * Reactor, Reactive Streams and Micrometer transitively, because their types appear in this
 * module's API. The same jar works unchanged on the class path.
 */
module dev.sluice.core {
  requires transitive reactor.core;
  requires transitive org.reactivestreams;
  requires transitive micrometer.core;
  requires org.slf4j;
  requires com.fasterxml.jackson.databind;
  requires jdk.jfr;
  requires jdk.management; // the physical memory, for the default block shuffle threshold
  requires jdk.unsupported;

  exports dev.sluice.core;
  exports dev.sluice.core.spi;

  exports dev.sluice.core.internal to dev.sluice.operators, dev.sluice.io;
  exports dev.sluice.core.internal.mapped to dev.sluice.io;
  exports dev.sluice.core.internal.metrics to dev.sluice.operators;
  exports dev.sluice.core.internal.shardfile to dev.sluice.operators, dev.sluice.io;

  // a pipeline state's JSON form is a private record that Jackson reads and writes
  opens dev.sluice.core to com.fasterxml.jackson.databind;
}
