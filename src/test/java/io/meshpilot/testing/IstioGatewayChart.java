package io.meshpilot.testing;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.marcnuri.helm.Helm;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Istio's {@code istio/gateway} chart (copied unchanged into src/test/resources/istio-gateway-chart,
 * see its SOURCE.md) rendered by Helm in process (helm-java), as {@code helm install <release>
 * istio/gateway -n <namespace>} renders it with the chart's default values: the release, its
 * namespace and the rendered manifests.
 */
public record IstioGatewayChart(String release, String namespace, List<JsonObject> manifests) {
    private static final Gson GSON = new Gson();

    public static Path dir() {
        return ServerProcess.home().resolve("src/test/resources/istio-gateway-chart/gateway");
    }

    /** {@code helm template <release> gateway -n <namespace>}, every manifest as JSON. */
    public static IstioGatewayChart render(String release, String namespace) {
        String text = new Helm(dir()).template().withName(release).withNamespace(namespace).call();
        List<JsonObject> docs = new ArrayList<>();
        for (Object o : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(text)) {
            if (o instanceof Map<?, ?> m) {
                docs.add(GSON.toJsonTree(m).getAsJsonObject());
            }
        }
        return new IstioGatewayChart(release, namespace, List.copyOf(docs));
    }

    /** The manifest of {@code kind} named {@code name}. */
    public JsonObject get(String kind, String name) {
        return manifests.stream().filter(m -> kind.equals(m.get("kind").getAsString())
                        && name.equals(m.getAsJsonObject("metadata").get("name").getAsString())).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name + " rendered"));
    }

    /**
     * A pod of the release's Deployment as its ReplicaSet asks the API server to create it (and
     * the API server sends it to the injection webhook): the pod template with the ReplicaSet's
     * {@code generateName}, the {@code pod-template-hash} label, the namespace and the ReplicaSet
     * as its controlling owner (which the injector reads the Deployment's name from); no name yet.
     */
    public JsonObject pod(String podTemplateHash) {
        JsonObject template = get("Deployment", release).getAsJsonObject("spec").getAsJsonObject("template").deepCopy();
        JsonObject pod = new JsonObject();
        pod.addProperty("apiVersion", "v1");
        pod.addProperty("kind", "Pod");
        JsonObject metadata = template.getAsJsonObject("metadata");
        metadata.addProperty("generateName", release + "-" + podTemplateHash + "-");
        metadata.addProperty("namespace", namespace);
        metadata.getAsJsonObject("labels").addProperty("pod-template-hash", podTemplateHash);
        JsonObject owner = new JsonObject();
        owner.addProperty("apiVersion", "apps/v1");
        owner.addProperty("kind", "ReplicaSet");
        owner.addProperty("name", release + "-" + podTemplateHash);
        owner.addProperty("uid", UUID.nameUUIDFromBytes((namespace + "/" + release).getBytes(StandardCharsets.UTF_8))
                .toString());
        owner.addProperty("controller", true);
        owner.addProperty("blockOwnerDeletion", true);
        JsonArray owners = new JsonArray();
        owners.add(owner);
        metadata.add("ownerReferences", owners);
        pod.add("metadata", metadata);
        pod.add("spec", template.getAsJsonObject("spec"));
        return pod;
    }
}
