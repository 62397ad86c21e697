package io.meshpilot.config;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The protos under src/main/proto carry the Istio API of the release MeshPilot names (README,
 * "Istio API"), field for field: every file, message, field, enum and enum value of istio/api's
 * configuration API at {@link #RELEASE} is compiled here, and nothing istio/api lacks (a field of
 * our own would accept YAML istiod does not know, and its number could later mean another
 * field there). istio/api's side is a manifest checked in under src/test/resources/istio-api,
 * written from its git tag by bin/istio-api-manifest, since a test cannot fetch it; to move to
 * another release:
 * <pre>
 *   bin/istio-api-manifest &lt;istio/api git dir&gt; v1.X.Y &gt; src/test/resources/istio-api/v1.X.Y.txt
 * </pre>
 * then set {@link #RELEASE}, the README's statement, and make this test pass.
 */
class IstioApiFieldsTest {
    static final String RELEASE = "v1.30.3";
    static final Path MANIFEST = Path.of(System.getProperty("meshpilot.home", "."),
            "src/test/resources/istio-api", RELEASE + ".txt");
    /** Where our generated classes live: java_package is io.meshpilot.api plus the file's directory. */
    static final String JAVA_PACKAGE = "io.meshpilot.api.";

    /**
     * Fields of istio/api newer than the release that MeshPilot carries on purpose: istiod's Gateway API
     * conversion at the commit the Gateway API goldens are pinned to (86c9f01) writes them, so the
     * generated config needs a place for them. Each is reported as not applied where the push path
     * ignores it (docs/XDS.md).
     */
    static final Set<String> NEWER_THAN_RELEASE = Set.of(
            "field istio.networking.v1alpha3.ServerTLSSettings.insecure_skip_verify");

    @Test
    void ourProtosCarryExactlyTheFieldsOfTheNamedRelease() throws IOException {
        Set<String> istio = istioNames();
        assertFalse(istio.isEmpty(), MANIFEST + " lists nothing");
        Set<String> ours = new TreeSet<>();
        List<String> notCompiled = new ArrayList<>();
        for (String line : istio) {
            if (line.startsWith("file ")) {
                String file = line.substring("file ".length());
                FileDescriptor compiled = compiled(file);
                if (compiled == null) {
                    notCompiled.add(file);
                } else {
                    names(compiled, ours);
                }
            }
        }
        Set<String> missing = new TreeSet<>(istio);
        missing.removeAll(ours);
        notCompiled.forEach(file -> missing.remove("file " + file));
        Set<String> extra = new TreeSet<>(ours);
        extra.removeAll(istio);
        Set<String> newerMissing = new TreeSet<>(NEWER_THAN_RELEASE);
        newerMissing.removeAll(extra);
        extra.removeAll(NEWER_THAN_RELEASE);
        assertAll(
                () -> assertEquals(List.of(), notCompiled, "istio/api " + RELEASE + " files with no compiled counterpart"),
                () -> assertEquals(List.of(), List.copyOf(missing), "in istio/api " + RELEASE + ", not in src/main/proto"),
                () -> assertEquals(List.of(), List.copyOf(extra), "in src/main/proto, not in istio/api " + RELEASE),
                () -> assertEquals(List.of(), List.copyOf(newerMissing),
                        "listed as carried beyond istio/api " + RELEASE + ", but not in src/main/proto (or in the release)"));
    }

    static Set<String> istioNames() throws IOException {
        Set<String> names = new TreeSet<>();
        for (String line : Files.readAllLines(MANIFEST)) {
            if (!line.isBlank() && !line.startsWith("#")) {
                names.add(line.trim());
            }
        }
        return names;
    }

    /**
     * Our compiled descriptor of istio/api's {@code file} (e.g. networking/v1alpha3/gateway.proto):
     * the outer class protoc names after the file, with "OuterClass" when a type has its name.
     */
    static FileDescriptor compiled(String file) {
        String dir = file.substring(0, file.lastIndexOf('/'));
        String stem = file.substring(file.lastIndexOf('/') + 1, file.length() - ".proto".length());
        StringBuilder camel = new StringBuilder();
        for (String part : stem.split("_")) {
            camel.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
        }
        String base = JAVA_PACKAGE + dir.replace('/', '.') + "." + camel;
        for (String name : List.of(base + "OuterClass", base)) {
            try {
                FileDescriptor d = (FileDescriptor) Class.forName(name).getMethod("getDescriptor").invoke(null);
                if (d.getName().equals(file)) {
                    return d;
                }
            } catch (ReflectiveOperationException e) {
                // not this name: try the next
            }
        }
        return null;
    }

    /** The names bin/istio-api-manifest writes, for one of our files. */
    static void names(FileDescriptor file, Set<String> out) {
        out.add("file " + file.getName());
        file.getMessageTypes().forEach(m -> names(m, out));
        file.getEnumTypes().forEach(e -> names(e, out));
    }

    static void names(Descriptor message, Set<String> out) {
        out.add("message " + message.getFullName());
        for (FieldDescriptor f : message.getFields()) {
            out.add("field " + f.getFullName());
        }
        for (Descriptor nested : message.getNestedTypes()) {
            if (!nested.getOptions().getMapEntry()) { // a map field's entry type: the field is listed
                names(nested, out);
            }
        }
        message.getEnumTypes().forEach(e -> names(e, out));
    }

    static void names(EnumDescriptor e, Set<String> out) {
        out.add("enum " + e.getFullName());
        e.getValues().forEach(v -> out.add("value " + e.getFullName() + "." + v.getName()));
    }
}
