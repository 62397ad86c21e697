package io.meshpilot.inject;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The sidecar's {@code OTEL_RESOURCE_ATTRIBUTES} when a mesh OpenTelemetry provider asks for
 * OpenTelemetry's Kubernetes semantic conventions ({@code serviceAttributeEnrichment:
 * OTEL_SEMANTIC_CONVENTIONS}), as istiod's template computes it: {@code service.namespace},
 * {@code service.version} and {@code service.instance.id}, each from its
 * {@code resource.opentelemetry.io/} annotation first.
 */
final class OtelResourceAttributes {
    private static final String ANNOTATION = "resource.opentelemetry.io/";

    private OtelResourceAttributes() {
    }

    /** The attributes, or "" when no provider asks for them. */
    static String of(MeshConfig mesh, JsonObject pod, String namespace) {
        boolean semanticConventions = mesh.getExtensionProvidersList().stream()
                .anyMatch(p -> p.hasOpentelemetry() && p.getOpentelemetry().getServiceAttributeEnrichment()
                        == MeshConfig.ExtensionProvider.ServiceAttributeEnrichment.OTEL_SEMANTIC_CONVENTIONS);
        if (!semanticConventions) {
            return "";
        }
        Map<String, String> annotations = Pods.stringMap(pod, "metadata", "annotations");
        Map<String, String> labels = Pods.stringMap(pod, "metadata", "labels");
        JsonArray containers = Pods.array(pod, "containers");
        List<String> attrs = new ArrayList<>();
        String ns = annotations.getOrDefault(ANNOTATION + "service.namespace", "");
        if (!ns.isEmpty()) {
            attrs.add("service.namespace=" + ns);
        } else if (!namespace.isEmpty()) {
            attrs.add("service.namespace=" + namespace);
        }
        String version = SidecarTemplate.firstNonEmpty(annotations.get(ANNOTATION + "service.version"),
                labels.get("app.kubernetes.io/version"));
        if (version.isEmpty() && containers.size() == 1) {
            version = imageVersion(Pods.string(containers.get(0).getAsJsonObject(), "image"));
        }
        if (!version.isEmpty()) {
            attrs.add("service.version=" + version);
        }
        String instance = annotations.getOrDefault(ANNOTATION + "service.instance.id", "");
        if (!instance.isEmpty()) {
            attrs.add("service.instance.id=" + instance);
        } else if (!containers.isEmpty()) {
            // the pod's name is not known yet: the kubelet substitutes $(POD_NAME)
            attrs.add("service.instance.id=" + namespace + ".$(POD_NAME)."
                    + Pods.string(containers.get(0).getAsJsonObject(), "name"));
        }
        return String.join(",", attrs);
    }

    /** An image reference's tag and digest ({@code tag@digest}, either alone, or "" for neither). */
    private static String imageVersion(String image) {
        String digest = "";
        int at = image.indexOf('@');
        if (at >= 0) {
            digest = image.substring(at + 1);
            image = image.substring(0, at);
        }
        int colon = image.lastIndexOf(':');
        String tag = colon > image.lastIndexOf('/') ? image.substring(colon + 1) : "";
        if (!tag.isEmpty() && !digest.isEmpty()) {
            return tag + "@" + digest;
        }
        return tag.isEmpty() ? digest : tag;
    }
}
