package io.meshpilot.chart;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.meshpilot.testing.ServerProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * MeshPilot's chart ({@code chart/}) through Helm itself, in process (helm-java bundles the Go
 * helm library): lint, and {@code helm template} parsed into manifests.
 */
final class HelmChart {
    static final String RELEASE = "istiod";
    static final String NAMESPACE = "istio-system";

    private HelmChart() {
    }

    static Path dir() {
        return ServerProcess.home().resolve("chart");
    }

    /** {@code helm lint --strict} on the chart's defaults (helm-java's lint takes no values file). */
    static LintResult lint() {
        return new Helm(dir()).lint().strict().call();
    }

    /** {@code helm template istiod chart -n istio-system [-f values]}: the text Helm prints. */
    static String template(Path valuesFile) {
        TemplateCommand t = new Helm(dir()).template().withName(RELEASE).withNamespace(NAMESPACE);
        if (valuesFile != null) {
            t = t.withValuesFile(valuesFile);
        }
        return t.call();
    }

    /** The rendered manifests, one map per YAML document (comment-only documents dropped). */
    static Rendered render(Path valuesFile) {
        return parse(template(valuesFile));
    }

    /** One YAML document (a ConfigMap's embedded YAML). */
    static Object yaml(String text) {
        return new Yaml(new SafeConstructor(new LoaderOptions())).load(text);
    }

    static Rendered parse(String text) {
        List<Map<String, Object>> docs = new ArrayList<>();
        for (Object o : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(text)) {
            if (o instanceof Map<?, ?> m) {
                @SuppressWarnings("unchecked")
                Map<String, Object> doc = (Map<String, Object>) m;
                docs.add(doc);
            }
        }
        return new Rendered(text, docs);
    }

    /** What {@code helm template} printed and its manifests. */
    record Rendered(String text, List<Map<String, Object>> manifests) {
        Optional<Map<String, Object>> find(String kind, String name) {
            return manifests.stream().filter(m -> kind.equals(m.get("kind")) && name.equals(Yamls.at(m, "metadata.name")))
                    .findFirst();
        }

        Map<String, Object> get(String kind, String name) {
            return find(kind, name).orElseThrow(() -> new AssertionError("no " + kind + " " + name + " rendered; kinds: "
                    + manifests.stream().map(m -> m.get("kind") + "/" + Yamls.at(m, "metadata.name")).toList()));
        }

        List<Map<String, Object>> all(String kind) {
            return manifests.stream().filter(m -> kind.equals(m.get("kind"))).toList();
        }
    }
}
