package io.meshpilot.mesh;

import com.google.protobuf.Message;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import io.meshpilot.config.yaml.FieldError;
import io.meshpilot.config.yaml.ProtoOverlay;
import io.meshpilot.config.yaml.ProtoYamlBinder;
import io.meshpilot.config.yaml.SafeYaml;
import io.meshpilot.config.yaml.YamlBindingException;
import io.meshpilot.config.yaml.YamlPaths;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Reads mesh config and mesh networks YAML as istiod does: the file's fields over Istio's
 * defaults ({@code mesh/mesh-defaults.yaml}), a missing file meaning all defaults, then the
 * semantic checks of {@link MeshValidator}. Every error names the file and line.
 */
public final class MeshConfigLoader {
    private static final String DEFAULTS = "/mesh/mesh-defaults.yaml";

    private final ProtoYamlBinder binder = new ProtoYamlBinder();
    private final MeshConfig defaults;

    public MeshConfigLoader() {
        try (InputStream in = MeshConfigLoader.class.getResourceAsStream(DEFAULTS)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + DEFAULTS);
            }
            defaults = parseMesh("mesh-defaults.yaml", new String(in.readAllBytes(), StandardCharsets.UTF_8),
                    MeshConfig.newBuilder());
        } catch (IOException | MeshConfigException e) {
            throw new IllegalStateException("built-in mesh defaults do not load: " + e.getMessage(), e);
        }
    }

    /** Istio's default mesh config. */
    public MeshConfig defaults() {
        return defaults;
    }

    /** Loads {@code file} over the defaults; a missing file yields the defaults. */
    public MeshConfig loadMesh(Path file) throws MeshConfigException {
        String text = read(file);
        return text == null ? defaults : parseMesh(file.toString(), text, defaults.toBuilder());
    }

    /** Parses mesh config text over the defaults. */
    public MeshConfig parseMesh(String source, String text) throws MeshConfigException {
        return parseMesh(source, text, defaults.toBuilder());
    }

    /** Loads mesh networks; a missing file means no networks. */
    public MeshNetworks loadNetworks(Path file) throws MeshConfigException {
        String text = read(file);
        return text == null ? MeshNetworks.getDefaultInstance() : parseNetworks(file.toString(), text);
    }

    /** Parses mesh networks text. */
    public MeshNetworks parseNetworks(String source, String text) throws MeshConfigException {
        Node root = single(source, text);
        MeshNetworks.Builder b = MeshNetworks.newBuilder();
        bind(source, root, b);
        MeshNetworks n = b.build();
        check(source, root, MeshValidator.validate(n));
        return n;
    }

    private MeshConfig parseMesh(String source, String text, MeshConfig.Builder over) throws MeshConfigException {
        Node root = single(source, text);
        MeshConfig.Builder doc = MeshConfig.newBuilder();
        bind(source, root, doc);
        // Extension providers merge by name, the file's winning, as istiod does.
        var defaultProviders = over.getExtensionProvidersList();
        ProtoOverlay.apply(over, doc.build(), root);
        var named = new HashSet<String>();
        over.getExtensionProvidersList().forEach(p -> named.add(p.getName()));
        for (var p : defaultProviders) {
            if (named.add(p.getName())) {
                over.addExtensionProviders(p);
            }
        }
        MeshConfig mesh = over.build();
        check(source, root, MeshValidator.validate(mesh));
        return mesh;
    }

    private void bind(String source, Node root, Message.Builder b) throws MeshConfigException {
        if (root == null) {
            return; // empty file: defaults
        }
        try {
            binder.bind(source, root, b);
        } catch (YamlBindingException e) {
            throw toException(source, e);
        }
    }

    private static void check(String source, Node root, List<MeshValidator.Violation> violations)
            throws MeshConfigException {
        if (!violations.isEmpty()) {
            MeshValidator.Violation v = violations.get(0);
            String more = violations.size() > 1 ? " (and " + (violations.size() - 1) + " more)" : "";
            throw new MeshConfigException(source, YamlPaths.line(root, v.path()), v.path() + ": " + v.reason() + more);
        }
    }

    private static Node single(String source, String text) throws MeshConfigException {
        try {
            List<Node> docs = SafeYaml.documents(source, text);
            if (docs.size() > 1) {
                throw new MeshConfigException(source, docs.get(1).getStartMark().getLine() + 1,
                        "expected one YAML document, found " + docs.size());
            }
            return docs.isEmpty() ? null : docs.get(0);
        } catch (YamlBindingException e) {
            throw toException(source, e);
        }
    }

    private static MeshConfigException toException(String source, YamlBindingException e) {
        FieldError f = e.first();
        String more = e.errors().size() > 1 ? " (and " + (e.errors().size() - 1) + " more)" : "";
        return new MeshConfigException(source, f.line(), (f.path().isEmpty() ? "" : f.path() + ": ") + f.reason() + more);
    }

    private static String read(Path file) throws MeshConfigException {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return null;
        } catch (CharacterCodingException e) {
            throw new MeshConfigException(file.toString(), 0, "not valid UTF-8");
        } catch (IOException e) {
            throw new MeshConfigException(file.toString(), 0, "cannot read: " + e);
        }
    }
}
