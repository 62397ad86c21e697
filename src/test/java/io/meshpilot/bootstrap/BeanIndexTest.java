package io.meshpilot.bootstrap;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jboss.jandex.DotName;
import org.jboss.jandex.IndexReader;
import org.jboss.jandex.IndexView;
import org.junit.jupiter.api.Test;

/**
 * Weld finds our CDI beans in the build's Jandex index (META-INF/jandex.idx) instead of parsing
 * every class file of the bean archive at each start (Weld reads an index from a jar only; that it
 * does is BeanIndexIT's). The index must list every class that defines a bean, or Weld would
 * never see it.
 */
class BeanIndexTest {
    /** CDI's bean-defining annotations, and those Helidon MP adds (JAX-RS resources and providers). */
    static final List<String> BEAN_DEFINING = List.of("jakarta.enterprise.context.ApplicationScoped",
            "jakarta.enterprise.context.RequestScoped", "jakarta.enterprise.context.SessionScoped",
            "jakarta.enterprise.context.ConversationScoped", "jakarta.enterprise.context.Dependent",
            "jakarta.enterprise.inject.Stereotype", "jakarta.interceptor.Interceptor", "jakarta.decorator.Decorator",
            "jakarta.ws.rs.Path", "jakarta.ws.rs.ext.Provider");

    static IndexView index() throws Exception {
        Path classes = Path.of(HelidonHost.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path file = classes.resolve("META-INF/jandex.idx");
        assertTrue(Files.isRegularFile(file), "no Jandex index in " + classes + " (the build's jandex-maven-plugin)");
        try (InputStream in = Files.newInputStream(file)) {
            return new IndexReader(in).read();
        }
    }

    @Test
    void theIndexListsEveryClassThatDefinesABean() throws Exception {
        IndexView index = index();
        List<JavaClass> beans = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.meshpilot").stream()
                .filter(c -> BEAN_DEFINING.stream().anyMatch(c::isAnnotatedWith))
                .toList();
        assertTrue(beans.size() >= 10, "the admin API's resources and applications, HelidonHost: " + beans);
        for (JavaClass bean : beans) {
            assertTrue(index.getClassByName(DotName.createSimple(bean.getName())) != null,
                    bean.getName() + " defines a bean but is not in the index: Weld would not see it");
        }
    }

    @Test
    void theGeneratedProtobufClassesStayOutOfTheIndex() throws Exception {
        // a thousand classes that define no bean: the index would only be larger to read
        assertFalse(index().getKnownClasses().stream()
                .anyMatch(c -> c.name().toString().startsWith("io.meshpilot.api.")));
    }
}
