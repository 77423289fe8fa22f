package dev.sluice.examples.cli;

import dev.sluice.core.testing.Python;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/** The h5py that the HDF5 tests write their files with, beside numpy in {@link Python#PYTHON}. */
final class H5py {
  private H5py() {}

  /**
   * Returns when {@link Python#PYTHON} imports numpy and h5py; else fails under {@code CI=true}
   * and otherwise aborts the calling test class, the message ending "skipping {@code what}".
   */
  static void require(String what) throws Exception {
    Python.requireNumpy();
    Process p = new ProcessBuilder(Python.PYTHON, "-c", "import h5py")
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      String msg = Python.PYTHON + " with h5py is missing (apt-get install python3-h5py)";
      if ("true".equalsIgnoreCase(System.getenv("CI"))) {
        Assertions.fail(msg);
      }
      Assumptions.abort(msg + "; skipping " + what);
    }
  }
}
