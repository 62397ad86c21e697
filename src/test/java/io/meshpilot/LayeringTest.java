package io.meshpilot;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The package layering of DESIGN.md section 5, checked over the main classes (tests may reach
 * anywhere). Bottom to top: {@code util}, {@code features}, {@code lifecycle}; the generated
 * Istio API ({@code api}); {@code config}; {@code model}; the components; {@code bootstrap};
 * {@code cli}. Libraries and the JDK are allowed everywhere.
 */
class LayeringTest {

    private static JavaClasses mainClasses;

    @BeforeAll
    static void importMainClasses() {
        mainClasses = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                // protoc's output for src/main/proto (a thousand classes) imports only protobuf:
                // it can neither close a cycle nor import a package it should not. Our classes'
                // uses of it are still seen, by name.
                .withImportOption(location -> !location.contains("/io/meshpilot/api/"))
                .importPackages("io.meshpilot");
    }

    @Test
    void featuresImportsOnlyUtil() {
        classes().that().resideInAPackage("io.meshpilot.features..")
                .should().onlyDependOnClassesThat(outsideMeshPilotOr(
                        "io.meshpilot.features..", "io.meshpilot.util.."))
                .because("features holds flags and environment that every package may read "
                        + "(istiod's pilot/pkg/features), so it cannot lean on any of them")
                .check(mainClasses);
    }

    @Test
    void lifecycleImportsOnlyFeaturesAndUtil() {
        classes().that().resideInAPackage("io.meshpilot.lifecycle..")
                .should().onlyDependOnClassesThat(outsideMeshPilotOr(
                        "io.meshpilot.lifecycle..", "io.meshpilot.features..", "io.meshpilot.util.."))
                .because("lifecycle is the start-up vocabulary every component speaks; "
                        + "only the wiring in bootstrap decides the order")
                .check(mainClasses);
    }

    @Test
    void modelImportsNothingAboveIt() {
        classes().that().resideInAPackage("io.meshpilot.model..")
                .should().onlyDependOnClassesThat(outsideMeshPilotOr(
                        "io.meshpilot.model..", "io.meshpilot.config..", "io.meshpilot.api..",
                        "io.meshpilot.lifecycle..", "io.meshpilot.features..", "io.meshpilot.util.."))
                .because("model is the shared vocabulary of registries, networking and xds "
                        + "(istiod's pilot/pkg/model); a component it imported could not import it back")
                .check(mainClasses);
    }

    @Test
    void kubeImportsOnlyTheBottomPackages() {
        classes().that().resideInAPackage("io.meshpilot.kube..")
                .should().onlyDependOnClassesThat(outsideMeshPilotOr(
                        "io.meshpilot.kube..", "io.meshpilot.lifecycle..", "io.meshpilot.features..", "io.meshpilot.util.."))
                .because("the Kubernetes client (istiod's pkg/kube) is shared by the config store, the registries "
                        + "and the mesh watcher; it knows none of them")
                .check(mainClasses);
    }

    @Test
    void registryDoesNotImportXds() {
        noClasses().that().resideInAPackage("io.meshpilot.registry..")
                .should().dependOnClassesThat().resideInAPackage("io.meshpilot.xds..")
                .because("a registry reports service and endpoint changes to listeners; "
                        + "the wiring in bootstrap connects them to the push path")
                .check(mainClasses);
    }

    @Test
    void onlyCliImportsBootstrap() {
        noClasses().that().resideOutsideOfPackages("io.meshpilot.bootstrap..", "io.meshpilot.cli..")
                .should().dependOnClassesThat().resideInAPackage("io.meshpilot.bootstrap..")
                .because("bootstrap is the roof: it wires every component, so a component "
                        + "importing it would depend on all the others")
                .check(mainClasses);
    }

    @Test
    void packagesAreFreeOfCycles() {
        slices().matching("io.meshpilot.(*)..")
                .should().beFreeOfCycles()
                .because("a cycle between packages means neither can be understood, "
                        + "tested or replaced without the other")
                .check(mainClasses);
    }

    private static DescribedPredicate<JavaClass> outsideMeshPilotOr(String... allowedPackages) {
        return not(resideInAnyPackage("io.meshpilot..")).or(resideInAnyPackage(allowedPackages))
                .as("classes outside io.meshpilot or in " + String.join(", ", allowedPackages));
    }
}
