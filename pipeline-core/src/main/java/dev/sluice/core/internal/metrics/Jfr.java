package dev.sluice.core.internal.metrics;

import java.util.function.Supplier;
import jdk.jfr.Event;

/** Whether a running flight recording enables an event, false when the runtime has no flight recorder. */
final class Jfr {
  private Jfr() {}

  static boolean enabled(Supplier<? extends Event> event) {
    try {
      return event.get().isEnabled();
    } catch (LinkageError e) {
      return false; // a runtime image without the jdk.jfr module
    }
  }
}
