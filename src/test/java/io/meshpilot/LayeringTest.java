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
 * The package layering of docs/ARCHITECTURE.md, checked over the main classes (tests may reach
 * anywhere). Bottom to top: {@code util}, {@code features}, {@code logging}, {@code monitoring},
 * {@code lifecycle}, {@code grpc}; the generated Istio API ({@code api}); {@code kube};
 * {@code config}; {@code model}; the components ({@code mesh}, {@code networking},
 * {@code registry}, {@code security}, {@code inject}, {@code webhook}, {@code xds},
 * {@code status}); {@code admin}; {@code bootstrap}; {@code cli}. Within a component, the
 * package root holds the vocabulary its children implement and the assembler lives in a leaf
 * ({@code config.controller}, {@code registry.controller}, {@code security.istiod}), so no two
 * packages at any depth import each other. Libraries and the JDK are allowed everywhere.
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
    void theBottomsImportOnlyEachOther() {
        onlyImports("io.meshpilot.util..", "util is the floor: helpers with no knowledge of the mesh");
        onlyImports("io.meshpilot.monitoring..", "monitoring registers istiod's metric names for every package, "
                + "so it can know none of them", "io.meshpilot.features..", "io.meshpilot.util..");
        onlyImports("io.meshpilot.logging..", "logging formats istiod's log lines for every package",
                "io.meshpilot.features..", "io.meshpilot.util..");
        onlyImports("io.meshpilot.grpc..", "grpc is the transport (listeners, TLS, limits) xDS and the CA run on; "
                + "it carries bytes and knows no service", "io.meshpilot.features..", "io.meshpilot.lifecycle..",
                "io.meshpilot.monitoring..", "io.meshpilot.util..");
    }

    @Test
    void kubeImportsOnlyTheBottomPackages() {
        onlyImports("io.meshpilot.kube..", "the Kubernetes client and controller kit (istiod's pkg/kube) are shared "
                + "by the config store, the registries, the CA and the webhooks; they know none of them",
                "io.meshpilot.lifecycle..", "io.meshpilot.features..", "io.meshpilot.monitoring..", "io.meshpilot.util..");
    }

    @Test
    void configImportsOnlyKubeAndTheBottoms() {
        onlyImports("io.meshpilot.config..", "config (istiod's pkg/config and config stores) is read by every "
                + "component above it; it knows the Istio API and where config comes from, nothing that consumes it",
                "io.meshpilot.api..", "io.meshpilot.kube..", "io.meshpilot.lifecycle..", "io.meshpilot.features..",
                "io.meshpilot.monitoring..", "io.meshpilot.util..");
    }

    @Test
    void networkingTranslatesTheModelAndKnowsNoTransport() {
        onlyImports("io.meshpilot.networking..", "networking turns the push context into Envoy resources "
                + "(istiod's pilot/pkg/networking); the registries fill the model and xds sends the result, "
                + "so a generator can be tested from a model alone",
                "io.meshpilot.model..", "io.meshpilot.config..", "io.meshpilot.api..", "io.meshpilot.lifecycle..",
                "io.meshpilot.features..", "io.meshpilot.monitoring..", "io.meshpilot.util..");
    }

    @Test
    void injectionAndWebhooksKnowNoPushPath() {
        onlyImports("io.meshpilot.inject..", "sidecar injection (istiod's pkg/kube/inject) renders pods from "
                + "templates and mesh config; it never needs the registries or the push path",
                "io.meshpilot.mesh..", "io.meshpilot.model..", "io.meshpilot.config..", "io.meshpilot.api..",
                "io.meshpilot.kube..", "io.meshpilot.lifecycle..", "io.meshpilot.features..",
                "io.meshpilot.monitoring..", "io.meshpilot.util..");
        onlyImports("io.meshpilot.webhook..", "the validation webhook and the webhook configuration patcher "
                + "(istiod's pkg/webhooks) check config and patch Kubernetes objects; they know no proxy",
                "io.meshpilot.config..", "io.meshpilot.api..", "io.meshpilot.kube..", "io.meshpilot.lifecycle..",
                "io.meshpilot.features..", "io.meshpilot.monitoring..", "io.meshpilot.util..");
    }

    @Test
    void statusReadsTheProxiesButNothingReadsStatus() {
        onlyImports("io.meshpilot.status..", "the status writer (istiod's pilot/pkg/status) reports what the "
                + "proxies acknowledged; it reads xds and writes config, and no component waits on it",
                "io.meshpilot.xds..", "io.meshpilot.model..", "io.meshpilot.config..", "io.meshpilot.api..",
                "io.meshpilot.kube..", "io.meshpilot.lifecycle..", "io.meshpilot.features..",
                "io.meshpilot.monitoring..", "io.meshpilot.util..");
        noClasses().that().resideOutsideOfPackages("io.meshpilot.status..", "io.meshpilot.admin..",
                        "io.meshpilot.bootstrap..", "io.meshpilot.cli..")
                .should().dependOnClassesThat().resideInAPackage("io.meshpilot.status..")
                .because("status hangs off the push path; only the wiring and the admin API may know it")
                .check(mainClasses);
    }

    @Test
    void securityDoesNotImportThePushPath() {
        noClasses().that().resideInAPackage("io.meshpilot.security..")
                .should().dependOnClassesThat().resideInAnyPackage("io.meshpilot.xds..", "io.meshpilot.networking..",
                        "io.meshpilot.registry..", "io.meshpilot.admin..")
                .because("the CA and the authenticators serve xds and the admin API, not the other way round")
                .check(mainClasses);
    }

    @Test
    void onlyTheRoofImportsTheAdminApi() {
        noClasses().that().resideOutsideOfPackages("io.meshpilot.admin..", "io.meshpilot.bootstrap..",
                        "io.meshpilot.cli..")
                .should().dependOnClassesThat().resideInAPackage("io.meshpilot.admin..")
                .because("the admin REST API reads every component; a component reading it back would be a cycle "
                        + "through the roof")
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
        slices().matching("io.meshpilot.(**)")
                .should().beFreeOfCycles()
                .because("a cycle between packages at any depth means neither can be understood, "
                        + "tested or replaced without the other")
                .check(mainClasses);
    }

    private static void onlyImports(String layer, String reason, String... below) {
        String[] allowed = new String[below.length + 1];
        allowed[0] = layer;
        System.arraycopy(below, 0, allowed, 1, below.length);
        classes().that().resideInAPackage(layer)
                .should().onlyDependOnClassesThat(outsideMeshPilotOr(allowed))
                .because(reason)
                .check(mainClasses);
    }

    private static DescribedPredicate<JavaClass> outsideMeshPilotOr(String... allowedPackages) {
        return not(resideInAnyPackage("io.meshpilot..")).or(resideInAnyPackage(allowedPackages))
                .as("classes outside io.meshpilot or in " + String.join(", ", allowedPackages));
    }
}
