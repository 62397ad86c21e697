package io.meshpilot.xds;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * DiscoveryServer only assembles xds (istiod's DiscoveryServer holds the parts, the parts do
 * the work): no part of xds reaches back up to it, not even for a logger name, a shared
 * static or a counter, so each part can be built and tested without it.
 */
class DiscoveryServerAssemblyTest {

    @Test
    void noPartOfXdsDependsOnItsAssembler() {
        JavaClasses xds = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.meshpilot.xds");
        noClasses().that().resideInAPackage("io.meshpilot.xds..")
                .and(not(belongToAnyOf(DiscoveryServer.class)))
                .should().dependOnClassesThat().belongToAnyOf(DiscoveryServer.class)
                .because("DiscoveryServer is the assembler: its parts get what they need passed in")
                .check(xds);
    }
}
