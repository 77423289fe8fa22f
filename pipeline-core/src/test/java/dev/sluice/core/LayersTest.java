package dev.sluice.core;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.util.Set;

/**
 * The layers of pipeline-core, one way: the public entry points that use internal implementations
 * ({@code Datasets}, {@code PipelineIterator}, {@code PipelineState}) → the internal packages, free
 * of cycles among themselves → the public element model and contracts (the rest of
 * {@code dev.sluice.core}, and the source authors' types in {@code dev.sluice.core.spi}), which reach
 * into no internal package but for the two accessors ({@code CoreAccess}: the model's hidden members the
 * source authors' types call; {@code SpiAccess}: theirs the model calls), which themselves reach
 * into no other internal class. So no cycle runs from the model through an internal implementation
 * back to it.
 */
@AnalyzeClasses(packages = "dev.sluice.core", importOptions = ImportOption.DoNotIncludeTests.class)
class LayersTest {
  private static final String API = "dev.sluice.core";
  private static final String SPI = "dev.sluice.core.spi";
  private static final String INTERNAL = "dev.sluice.core.internal";

  /** Public classes of {@code dev.sluice.core} that construct or use internal implementations. */
  private static final Set<String> ENTRY_POINTS = Set.of("Datasets", "PipelineIterator", "PipelineState");

  /** The accessors of hidden members between {@code dev.sluice.core} and {@code dev.sluice.core.spi}. */
  private static final Set<String> ACCESSORS = Set.of("CoreAccess", "SpiAccess");

  private static final DescribedPredicate<JavaClass> ACCESSOR = DescribedPredicate.describe(
      "the accessors " + ACCESSORS, c -> packageOf(c).equals(INTERNAL) && ACCESSORS.contains(topLevel(c)));
  private static final DescribedPredicate<JavaClass> ENTRY = DescribedPredicate.describe(
      "the entry points " + ENTRY_POINTS, c -> packageOf(c).equals(API) && ENTRY_POINTS.contains(topLevel(c)));
  private static final DescribedPredicate<JavaClass> MODEL = DescribedPredicate.describe(
      "the public model (" + API + " except the entry points, and " + SPI + ")",
      c -> packageOf(c).equals(SPI) || packageOf(c).equals(API) && !ENTRY_POINTS.contains(topLevel(c)));

  @ArchTest
  static final ArchRule modelDoesNotUseInternals = noClasses()
      .that(MODEL)
      .should().dependOnClassesThat(DescribedPredicate.and(
          JavaClass.Predicates.resideInAnyPackage(INTERNAL + ".."), DescribedPredicate.not(ACCESSOR)))
      .because("internal packages implement the public model; a public type finds its internals through "
          + "an interface or a context key it owns");

  @ArchTest
  static final ArchRule accessorsUseOnlyTheModel = noClasses()
      .that(ACCESSOR)
      .should().dependOnClassesThat(DescribedPredicate.and(
          JavaClass.Predicates.resideInAnyPackage(INTERNAL + ".."), DescribedPredicate.not(ACCESSOR)))
      .orShould().dependOnClassesThat(ENTRY)
      .because("the accessors only pass hidden members of the model between its two packages");

  @ArchTest
  static final ArchRule internalsDoNotUseEntryPoints = noClasses()
      .that().resideInAnyPackage(INTERNAL + "..")
      .should().dependOnClassesThat(ENTRY)
      .because("the entry points sit above the internal packages");

  @ArchTest
  static final ArchRule internalPackagesAreFreeOfCycles = slices()
      .assignedFrom(new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass c) {
          return packageOf(c).startsWith(INTERNAL) ? SliceIdentifier.of(packageOf(c)) : SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
          return "the internal packages of pipeline-core";
        }
      })
      .should().beFreeOfCycles();

  /** The package of {@code c}, of its element type for an array. */
  private static String packageOf(JavaClass c) {
    return c.getBaseComponentType().getPackageName();
  }

  /** The simple name of the top-level class {@code c} (or its element type) is declared in. */
  private static String topLevel(JavaClass c) {
    JavaClass base = c.getBaseComponentType();
    String name = base.getName().substring(base.getPackageName().length() + 1);
    int nested = name.indexOf('$');
    return nested < 0 ? name : name.substring(0, nested);
  }
}
