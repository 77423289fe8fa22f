package dev.sluice.io;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The layers of pipeline-io, one way: the registry ({@code dev.sluice.io}: {@code Formats},
 * {@code DatasetFormat}) → each format's package ({@code dev.sluice.io.npy}, {@code .parquet}, …)
 * → its own {@code internal} package → the shared helpers ({@code dev.sluice.io.internal}) and
 * pipeline-core. Formats do not form cycles, no format reaches into another format's internals,
 * and the shared helpers know no format.
 */
@AnalyzeClasses(packages = "dev.sluice.io", importOptions = ImportOption.DoNotIncludeTests.class)
class LayersTest {
  private static final String IO = "dev.sluice.io";
  private static final String SHARED = IO + ".internal";

  @ArchTest
  static final ArchRule formatsAreFreeOfCycles = slices()
      .matching(IO + ".(*)..")
      .should().beFreeOfCycles();

  @ArchTest
  static final ArchRule sharedHelpersKnowNoFormat = noClasses()
      .that().resideInAPackage(SHARED)
      .should().dependOnClassesThat(DescribedPredicate.describe("a format's classes",
          (JavaClass c) -> formatOf(c) != null))
      .because("the shared helpers serve every format");

  @ArchTest
  static final ArchRule noFormatUsesAnotherFormatsInternals = noClasses()
      .should(new com.tngtech.archunit.lang.ArchCondition<JavaClass>("use another format's internals") {
        @Override
        public void check(JavaClass c, com.tngtech.archunit.lang.ConditionEvents events) {
          String own = formatOf(c);
          c.getDirectDependenciesFromSelf().forEach(d -> {
            JavaClass target = d.getTargetClass().getBaseComponentType();
            String format = formatOf(target);
            if (format != null && !format.equals(own) && target.getPackageName().contains(".internal")) {
              events.add(com.tngtech.archunit.lang.SimpleConditionEvent.satisfied(d, d.getDescription()));
            }
          });
        }
      })
      .because("a format reaches another only through its public API");

  /** The format package {@code c} belongs to ({@code "npy"}, {@code "parquet"}, …), or null for the shared helpers. */
  private static String formatOf(JavaClass c) {
    String p = c.getBaseComponentType().getPackageName();
    if (!p.startsWith(IO + ".") || p.equals(SHARED) || p.startsWith(SHARED + ".")) { // shared helpers and their sub-packages
      return null;
    }
    String rest = p.substring(IO.length() + 1);
    int dot = rest.indexOf('.');
    return dot < 0 ? rest : rest.substring(0, dot);
  }
}
