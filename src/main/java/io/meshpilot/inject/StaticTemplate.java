package io.meshpilot.inject;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * A template from the injector ConfigMap (an operator's {@code sidecarInjectorWebhook.templates},
 * the SPIRE one of Istio's docs, say) whose text has no Go template action: its YAML is the
 * template's output as it stands, laid over the others as istiod lays any template's output.
 * Text with actions ({@code {{ ... }}}) is not interpreted: a pod asking for it is refused by name.
 */
final class StaticTemplate {
    private static final Gson GSON = new GsonBuilder().serializeNulls().create();

    private StaticTemplate() {
    }

    /** The template pod the text stands for, or null when it has Go template actions or is no YAML mapping. */
    static JsonObject of(String text) {
        if (text == null || text.isBlank() || text.contains("{{")) {
            return null;
        }
        Object parsed;
        try {
            parsed = new Yaml(new SafeConstructor(new LoaderOptions())).load(text);
        } catch (RuntimeException e) {
            return null;
        }
        JsonElement tree = GSON.toJsonTree(parsed);
        if (!tree.isJsonObject()) {
            return null;
        }
        JsonObject pod = tree.getAsJsonObject();
        // the shape the merge reads: metadata labels and annotations, spec lists present
        Pods.object(pod, "metadata", "labels");
        Pods.object(pod, "metadata", "annotations");
        JsonObject spec = Pods.object(pod, "spec");
        for (String list : new String[] {"initContainers", "containers"}) {
            if (!spec.has(list) || !spec.get(list).isJsonArray()) {
                spec.add(list, new JsonArray());
            }
        }
        return pod;
    }
}
