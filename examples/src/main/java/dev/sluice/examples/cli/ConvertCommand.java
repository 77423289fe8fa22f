package dev.sluice.examples.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code sluice convert}: not available yet; exits 2 saying so. */
@Command(name = "convert", mixinStandardHelpOptions = true, description = "Not available yet.")
final class ConvertCommand implements Callable<Integer> {
  @Parameters(arity = "0..*", hidden = true)
  List<String> args;

  @Override
  public Integer call() {
    throw new SluiceCommand.NotImplementedException("sluice convert");
  }
}
