package dev.sluice.operators;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.InstanceofCheck;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The layers of pipeline-operators, one way: the facade ({@code Pipeline} and the public
 * transformers) → the shared cache → the plan (the planner and its stages) → the runtime operators
 * → pipeline-core. Internal code may use a few public value types of the facade package (policies,
 * the cache's configuration and counts, its exception), which depend on nothing above them. Only
 * the plan builder tells stages and sources apart by their types.
 */
@AnalyzeClasses(packages = "dev.sluice.operators", importOptions = ImportOption.DoNotIncludeTests.class)
class LayersTest {
  private static final String FACADE = "dev.sluice.operators";
  private static final String INTERNAL = "dev.sluice.operators.internal";
  private static final String CACHE = "dev.sluice.operators.internal.cache";

  /** Public types of the facade package that internal code may use as plain values. */
  private static final Set<String> VALUE_TYPES =
      Set.of("EqualLength", "SplitShuffle", "RandomAccessShuffle", "CacheSpec", "CacheMonitor", "CacheStats", "CacheException",
          "Enumerated");

  /**
   * The runtime operators in {@code dev.sluice.operators.internal} and what they share: the
   * {@code Flux*} operators (except the {@code FluxStage} stage type), the {@code *Operator}
   * transformers the facade and the planner build, the window shuffle and its column windows, the
   * index path's sequence and permutation, the padded collator, and the small helpers both layers use.
   */
  private static final Pattern RUNTIME = Pattern.compile(
      "Flux(?!Stage$)\\w+|\\w+Operator|WindowShuffle|ColumnWindows|SplitPiece|IndexSequence|KeyedPermutation"
          + "|PaddedCollator|Schemas|SourceNames|Positional");

  private static final DescribedPredicate<JavaClass> FACADE_BEHAVIOUR = DescribedPredicate.describe(
      "facade classes other than the value types " + VALUE_TYPES,
      c -> packageOf(c).equals(FACADE) && !VALUE_TYPES.contains(topLevel(c)));
  private static final DescribedPredicate<JavaClass> VALUES = DescribedPredicate.describe(
      "the facade's value types " + VALUE_TYPES,
      c -> packageOf(c).equals(FACADE) && VALUE_TYPES.contains(topLevel(c)));
  private static final DescribedPredicate<JavaClass> RUNTIME_CLASSES = DescribedPredicate.describe(
      "runtime operator classes (" + RUNTIME.pattern() + ")",
      c -> packageOf(c).equals(INTERNAL) && RUNTIME.matcher(topLevel(c)).matches());
  private static final DescribedPredicate<JavaClass> PLAN_CLASSES = DescribedPredicate.describe(
      "plan classes (the rest of " + INTERNAL + ")",
      c -> packageOf(c).equals(INTERNAL) && !RUNTIME.matcher(topLevel(c)).matches());
  private static final DescribedPredicate<JavaClass> CACHE_CLASSES = DescribedPredicate.describe(
      "the cache (" + CACHE + ")", c -> packageOf(c).equals(CACHE));

  @ArchTest
  static final ArchRule internalCodeDoesNotUseTheFacade = noClasses()
      .that().resideInAnyPackage(INTERNAL + "..")
      .should().dependOnClassesThat(FACADE_BEHAVIOUR)
      .because("the facade calls internal code, never the reverse; move what both need into an internal class");

  @ArchTest
  static final ArchRule valueTypesDependOnNothingAbove = noClasses()
      .that(VALUES)
      .should().dependOnClassesThat(FACADE_BEHAVIOUR)
      .orShould().dependOnClassesThat().resideInAnyPackage(INTERNAL + "..")
      .because("internal code uses them, so they must sit below it");

  @ArchTest
  static final ArchRule runtimeDoesNotUseThePlan = noClasses()
      .that(RUNTIME_CLASSES)
      .should().dependOnClassesThat(PLAN_CLASSES)
      .orShould().dependOnClassesThat(CACHE_CLASSES)
      .because("the planner assembles runtime operators; an operator never asks the planner");

  @ArchTest
  static final ArchRule planDoesNotUseTheCache = noClasses()
      .that(PLAN_CLASSES)
      .should().dependOnClassesThat(CACHE_CLASSES)
      .because("the cache runs its upstream through the planner");

  @ArchTest
  static final ArchRule packagesAreFreeOfCycles = slices()
      .assignedFrom(packages())
      .should().beFreeOfCycles();

  @ArchTest
  static final ArchRule layersAreFreeOfCycles = slices()
      .assignedFrom(layers())
      .should().beFreeOfCycles();

  /** The class that builds the plan: the one place that decides by a stage's or a source's type. */
  private static final String PLAN_BUILDER = INTERNAL + ".PlanBuilder";

  /**
   * Classes that may still test a type, each with its reason: the cache classifies the upstream it
   * stores (random access or splits, decoding into batches or not) and the stages before it (a
   * user function needs a name, a prefetch changes nothing stored); that is the cache's own layout,
   * not a path of the plan.
   */
  private static final Set<String> TYPE_TESTS_ALLOWED = Set.of(PLAN_BUILDER, CACHE + ".Upstream", CACHE + ".CachedDataset");

  @ArchTest
  static final ArchRule onlyThePlanBuilderTellsStagesAndSourcesApart = classes()
      .that().resideInAnyPackage(FACADE + "..")
      .should(new ArchCondition<JavaClass>("test no Stage subtype and no Dataset subtype of pipeline-core "
          + "(RandomAccessDataset, SplitDataset, BatchSplitDataset, ...) with instanceof outside the plan builder") {
        @Override
        public void check(JavaClass c, ConditionEvents events) {
          if (TYPE_TESTS_ALLOWED.contains(c.getName().replaceAll("\\$.*", ""))) {
            return;
          }
          for (InstanceofCheck check : c.getInstanceofChecks()) {
            JavaClass type = check.getRawType();
            if (isStageSubtype(type) || isCoreDatasetSubtype(type)) {
              events.add(SimpleConditionEvent.violated(c, check.getOwner().getFullName() + " tests instanceof "
                  + type.getName() + " " + check.getSourceCodeLocation() + ": read the Plan (PlanBuilder decides by type) or declare a property on the Stage type"));
            }
          }
        }
      })
      .because("the plan is built once by PlanBuilder, and everything else reads it instead of re-deriving it");

  private static boolean isStageSubtype(JavaClass type) {
    return !type.getName().equals(INTERNAL + ".Stage") && type.isAssignableTo(INTERNAL + ".Stage");
  }

  private static boolean isCoreDatasetSubtype(JavaClass type) {
    return type.getPackageName().equals("dev.sluice.core") && !type.getName().equals("dev.sluice.core.Dataset")
        && type.isAssignableTo("dev.sluice.core.Dataset");
  }

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

  /** One slice per package, the facade's value types a slice of their own. */
  private static SliceAssignment packages() {
    return new SliceAssignment() {
      @Override
      public SliceIdentifier getIdentifierOf(JavaClass c) {
        if (VALUES.test(c)) {
          return SliceIdentifier.of("facade values");
        }
        return packageOf(c).startsWith(FACADE) ? SliceIdentifier.of(packageOf(c)) : SliceIdentifier.ignore();
      }

      @Override
      public String getDescription() {
        return "packages of pipeline-operators";
      }
    };
  }

  /** The layers: facade, facade values, cache, plan, runtime. */
  private static SliceAssignment layers() {
    return new SliceAssignment() {
      @Override
      public SliceIdentifier getIdentifierOf(JavaClass c) {
        if (VALUES.test(c)) {
          return SliceIdentifier.of("facade values");
        }
        if (FACADE_BEHAVIOUR.test(c)) {
          return SliceIdentifier.of("facade");
        }
        if (CACHE_CLASSES.test(c)) {
          return SliceIdentifier.of("cache");
        }
        if (RUNTIME_CLASSES.test(c)) {
          return SliceIdentifier.of("runtime");
        }
        return PLAN_CLASSES.test(c) ? SliceIdentifier.of("plan") : SliceIdentifier.ignore();
      }

      @Override
      public String getDescription() {
        return "layers of pipeline-operators";
      }
    };
  }
}
