package io.meshpilot.testing.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.schema.Schemas;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** The CustomResourceDefinitions of Istio's Pilot kinds, made from {@link Schemas#PILOT}. */
final class IstioCrds {
    /** The short names Istio's CRDs declare ({@code kubectl get vs}). */
    private static final Map<String, String> ISTIO_SHORT_NAMES = Map.of(
            "VirtualService", "vs", "DestinationRule", "dr", "Gateway", "gw", "ServiceEntry", "se",
            "WorkloadEntry", "we", "WorkloadGroup", "wg", "PeerAuthentication", "pa", "RequestAuthentication", "ra",
            "AuthorizationPolicy", "ap", "Telemetry", "telemetry");

    private IstioCrds() {
    }

    /**
     * Istio's CRDs as the stand-in needs them: group, names, scope, served versions (the first
     * of each kind's versions is the storage version), the status subresource, and a schema
     * that keeps every field (Istio's own CRDs validate through the webhook, not the schema).
     */
    static List<JsonObject> all() {
        List<JsonObject> crds = new ArrayList<>();
        for (Schema s : Schemas.PILOT.all()) {
            JsonObject names = new JsonObject();
            names.addProperty("kind", s.kind());
            names.addProperty("listKind", s.kind() + "List");
            names.addProperty("plural", s.plural());
            names.addProperty("singular", s.kind().toLowerCase(Locale.ROOT));
            names.add("categories", Json.array(List.of("istio-io", s.group().split("\\.")[0] + "-istio-io")));
            Optional.ofNullable(ISTIO_SHORT_NAMES.get(s.kind()))
                    .ifPresent(n -> names.add("shortNames", Json.array(List.of(n))));
            JsonArray versions = new JsonArray();
            for (String v : s.versions()) {
                JsonObject version = new JsonObject();
                version.addProperty("name", v);
                version.addProperty("served", true);
                version.addProperty("storage", v.equals(s.versions().get(0)));
                JsonObject schema = new JsonObject();
                JsonObject openApi = new JsonObject();
                openApi.addProperty("type", "object");
                openApi.addProperty("x-kubernetes-preserve-unknown-fields", true);
                schema.add("openAPIV3Schema", openApi);
                version.add("schema", schema);
                JsonObject subresources = new JsonObject();
                subresources.add("status", new JsonObject());
                version.add("subresources", subresources);
                versions.add(version);
            }
            JsonObject spec = new JsonObject();
            spec.addProperty("group", s.group());
            spec.add("names", names);
            spec.addProperty("scope", s.clusterScoped() ? "Cluster" : "Namespaced");
            spec.add("versions", versions);
            JsonObject crd = new JsonObject();
            crd.addProperty("apiVersion", "apiextensions.k8s.io/v1");
            crd.addProperty("kind", "CustomResourceDefinition");
            JsonObject meta = new JsonObject();
            meta.addProperty("name", s.plural() + "." + s.group());
            JsonObject labels = new JsonObject();
            labels.addProperty("app.kubernetes.io/part-of", "istio");
            meta.add("labels", labels);
            crd.add("metadata", meta);
            crd.add("spec", spec);
            crds.add(crd);
        }
        return crds;
    }
}
