package dev.sluice.examples.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code sluice generate}: see DESIGN.md §11. Not implemented yet. */
@Command(name = "generate", mixinStandardHelpOptions = true, description = "Not implemented yet (see the README).")
final class GenerateCommand implements Callable<Integer> {
  @Parameters(arity = "0..*", hidden = true)
  List<String> args;

  @Override
  public Integer call() {
    throw new SluiceCommand.NotImplementedException("sluice generate");
  }
}
