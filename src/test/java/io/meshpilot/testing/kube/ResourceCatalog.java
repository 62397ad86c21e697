package io.meshpilot.testing.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which resources the stand-in serves: the built-in kinds MeshPilot and kubectl use, plus one
 * entry per served version of every registered CustomResourceDefinition. Answers the API
 * discovery documents kubectl and the Java client read before anything else.
 */
final class ResourceCatalog {
    static final String CRD_GROUP = "apiextensions.k8s.io";
    private static final List<String> VERBS = List.of("create", "delete", "deletecollection", "get", "list", "patch",
            "update", "watch");
    /** The kinds {@code kubectl get all} lists (the real server's "all" category). */
    private static final Set<String> IN_ALL = Set.of("Pod", "Service", "Deployment", "ReplicaSet",
            "StatefulSet", "DaemonSet");
    private static final Pattern KUBE_VERSION = Pattern.compile("v(\\d+)(?:(alpha|beta)(\\d+))?");

    /** group version ("v1", "apps/v1") -> plural -> type. */
    private final Map<String, Map<String, ResourceType>> byGroupVersion = new TreeMap<>();
    /** CRD name -> the types it registered. */
    private final Map<String, List<ResourceType>> byCrd = new LinkedHashMap<>();

    ResourceCatalog() {
        core("Namespace", "namespaces", false, true, "ns");
        core("Service", "services", true, true, "svc");
        core("Endpoints", "endpoints", true, false, "ep");
        core("Pod", "pods", true, true, "po");
        core("Node", "nodes", false, true, "no");
        core("ConfigMap", "configmaps", true, false, "cm");
        core("Secret", "secrets", true, false);
        core("ServiceAccount", "serviceaccounts", true, false, "sa");
        core("Event", "events", true, false, "ev");
        builtin("apps", "v1", "Deployment", "deployments", true, true, "deploy");
        builtin("apps", "v1", "ReplicaSet", "replicasets", true, true, "rs");
        builtin("apps", "v1", "StatefulSet", "statefulsets", true, true, "sts");
        builtin("apps", "v1", "DaemonSet", "daemonsets", true, true, "ds");
        builtin("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", true, false);
        builtin("coordination.k8s.io", "v1", "Lease", "leases", true, false);
        builtin("networking.k8s.io", "v1", "Ingress", "ingresses", true, true, "ing");
        builtin("networking.k8s.io", "v1", "IngressClass", "ingressclasses", false, false);
        builtin("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests", false, true,
                "csr");
        builtin("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration",
                "mutatingwebhookconfigurations", false, false);
        builtin("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration",
                "validatingwebhookconfigurations", false, false);
        builtin(CRD_GROUP, "v1", "CustomResourceDefinition", "customresourcedefinitions", false, true, "crd", "crds");
        // what MeshPilot's Helm chart installs besides the kinds above
        builtin("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false, false);
        builtin("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", false, false);
        builtin("rbac.authorization.k8s.io", "v1", "Role", "roles", true, false);
        builtin("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", true, false);
        builtin("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", true, true, "pdb");
        builtin("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, true, "hpa");
    }

    private void core(String kind, String plural, boolean namespaced, boolean status, String... shortNames) {
        builtin("", "v1", kind, plural, namespaced, status, shortNames);
    }

    private void builtin(String group, String version, String kind, String plural, boolean namespaced,
                         boolean status, String... shortNames) {
        add(new ResourceType(group, version, kind, plural, kind.toLowerCase(Locale.ROOT), namespaced, status,
                List.of(shortNames), IN_ALL.contains(kind) ? List.of("all") : List.of(), false));
    }

    private void add(ResourceType t) {
        byGroupVersion.computeIfAbsent(t.apiVersion(), k -> new TreeMap<>()).put(t.plural(), t);
    }

    synchronized Optional<ResourceType> find(String group, String version, String plural) {
        String gv = group.isEmpty() ? version : group + "/" + version;
        return Optional.ofNullable(byGroupVersion.getOrDefault(gv, Map.of()).get(plural));
    }

    synchronized Optional<ResourceType> forKind(String apiVersion, String kind) {
        return byGroupVersion.getOrDefault(apiVersion, Map.of()).values().stream()
                .filter(t -> t.kind().equals(kind)).findFirst();
    }

    synchronized boolean servesGroupVersion(String group, String version) {
        return byGroupVersion.containsKey(group.isEmpty() ? version : group + "/" + version);
    }

    /**
     * Serves the kinds a CRD declares, one entry per served version; a CRD that is updated
     * replaces its previous entries. Returns a reason when the CRD cannot be served.
     */
    synchronized Optional<String> register(JsonObject crd) {
        String name = Json.string(crd, "metadata", "name");
        JsonObject spec = crd.getAsJsonObject("spec");
        if (spec == null) {
            return Optional.of("spec: Required value");
        }
        String group = Json.string(spec, "group");
        JsonObject names = spec.getAsJsonObject("names");
        JsonArray versions = spec.getAsJsonArray("versions");
        if (group == null || names == null || versions == null || versions.isEmpty()) {
            return Optional.of("spec.group, spec.names and spec.versions are required");
        }
        String plural = Json.string(names, "plural");
        String kind = Json.string(names, "kind");
        if (plural == null || kind == null) {
            return Optional.of("spec.names.plural and spec.names.kind are required");
        }
        if (!(plural + "." + group).equals(name)) {
            return Optional.of("metadata.name: Invalid value: \"" + name + "\": must be spec.names.plural+\".\"+spec.group");
        }
        String singular = Optional.ofNullable(Json.string(names, "singular")).orElse(kind.toLowerCase(Locale.ROOT));
        boolean namespaced = !"Cluster".equals(Json.string(spec, "scope"));
        List<String> shortNames = Json.strings(names.get("shortNames"));
        List<String> categories = Json.strings(names.get("categories"));
        unregister(name);
        List<ResourceType> types = new ArrayList<>();
        for (JsonElement v : versions) {
            JsonObject version = v.getAsJsonObject();
            if (!version.has("served") || version.get("served").getAsBoolean()) {
                boolean status = version.has("subresources") && version.getAsJsonObject("subresources").has("status");
                types.add(new ResourceType(group, Json.string(version, "name"), kind, plural, singular, namespaced,
                        status, shortNames, categories, true));
            }
        }
        types.forEach(this::add);
        byCrd.put(name, types);
        return Optional.empty();
    }

    /** Stops serving a CRD's kinds; returns the storage key of its objects, if it was served. */
    synchronized Optional<String> unregister(String crdName) {
        List<ResourceType> types = byCrd.remove(crdName);
        if (types == null || types.isEmpty()) {
            return Optional.empty();
        }
        for (ResourceType t : types) {
            Map<String, ResourceType> gv = byGroupVersion.get(t.apiVersion());
            if (gv != null) {
                gv.remove(t.plural());
                if (gv.isEmpty()) {
                    byGroupVersion.remove(t.apiVersion());
                }
            }
        }
        return Optional.of(types.get(0).storageKey());
    }

    /** {@code GET /api}: the core group's versions. */
    JsonObject coreVersions(String serverAddress) {
        JsonObject o = new JsonObject();
        o.addProperty("kind", "APIVersions");
        o.add("versions", Json.array(List.of("v1")));
        JsonObject address = new JsonObject();
        address.addProperty("clientCIDR", "0.0.0.0/0");
        address.addProperty("serverAddress", serverAddress);
        JsonArray addresses = new JsonArray();
        addresses.add(address);
        o.add("serverAddressByClientCIDRs", addresses);
        return o;
    }

    /** {@code GET /apis}: every named group with its versions, the preferred first. */
    synchronized JsonObject groupList() {
        Map<String, List<String>> versionsByGroup = new TreeMap<>();
        for (String gv : byGroupVersion.keySet()) {
            int slash = gv.indexOf('/');
            if (slash > 0) {
                versionsByGroup.computeIfAbsent(gv.substring(0, slash), g -> new ArrayList<>()).add(gv.substring(slash + 1));
            }
        }
        JsonArray groups = new JsonArray();
        versionsByGroup.forEach((group, versions) -> {
            versions.sort(versionPriority());
            JsonObject g = new JsonObject();
            g.addProperty("name", group);
            JsonArray vs = new JsonArray();
            for (String v : versions) {
                vs.add(groupVersion(group, v));
            }
            g.add("versions", vs);
            g.add("preferredVersion", groupVersion(group, versions.get(0)));
            groups.add(g);
        });
        JsonObject o = new JsonObject();
        o.addProperty("kind", "APIGroupList");
        o.addProperty("apiVersion", "v1");
        o.add("groups", groups);
        return o;
    }

    /** {@code GET /apis/<group>}: one group. */
    synchronized Optional<JsonObject> group(String name) {
        for (JsonElement g : groupList().getAsJsonArray("groups")) {
            if (name.equals(Json.string(g.getAsJsonObject(), "name"))) {
                JsonObject o = g.getAsJsonObject().deepCopy();
                o.addProperty("kind", "APIGroup");
                o.addProperty("apiVersion", "v1");
                return Optional.of(o);
            }
        }
        return Optional.empty();
    }

    private static JsonObject groupVersion(String group, String version) {
        JsonObject v = new JsonObject();
        v.addProperty("groupVersion", group + "/" + version);
        v.addProperty("version", version);
        return v;
    }

    /** {@code GET /api/v1} or {@code /apis/<group>/<version>}: the resources and their subresources. */
    synchronized Optional<JsonObject> resourceList(String group, String version) {
        String gv = group.isEmpty() ? version : group + "/" + version;
        Map<String, ResourceType> types = byGroupVersion.get(gv);
        if (types == null) {
            return Optional.empty();
        }
        JsonArray resources = new JsonArray();
        for (ResourceType t : types.values()) {
            JsonObject r = new JsonObject();
            r.addProperty("name", t.plural());
            r.addProperty("singularName", t.singular());
            r.addProperty("namespaced", t.namespaced());
            r.addProperty("kind", t.kind());
            r.add("verbs", Json.array(VERBS));
            if (!t.shortNames().isEmpty()) {
                r.add("shortNames", Json.array(t.shortNames()));
            }
            if (!t.categories().isEmpty()) {
                r.add("categories", Json.array(t.categories()));
            }
            resources.add(r);
            if (t.statusSubresource()) {
                JsonObject s = new JsonObject();
                s.addProperty("name", t.plural() + "/status");
                s.addProperty("singularName", "");
                s.addProperty("namespaced", t.namespaced());
                s.addProperty("kind", t.kind());
                s.add("verbs", Json.array(List.of("get", "patch", "update")));
                resources.add(s);
            }
            if (t.approvalSubresource()) {
                JsonObject s = new JsonObject();
                s.addProperty("name", t.plural() + "/approval");
                s.addProperty("singularName", "");
                s.addProperty("namespaced", t.namespaced());
                s.addProperty("kind", t.kind());
                s.add("verbs", Json.array(List.of("get", "patch", "update")));
                resources.add(s);
            }
        }
        JsonObject o = new JsonObject();
        o.addProperty("kind", "APIResourceList");
        o.addProperty("apiVersion", "v1");
        o.addProperty("groupVersion", gv);
        o.add("resources", resources);
        return Optional.of(o);
    }

    /** Every served type, for the OpenAPI documents. */
    synchronized Map<String, List<ResourceType>> typesByGroupVersion() {
        Map<String, List<ResourceType>> out = new TreeMap<>();
        byGroupVersion.forEach((gv, types) -> out.put(gv, List.copyOf(types.values())));
        return out;
    }

    /** Kubernetes' version order: GA before beta before alpha, higher numbers first. */
    static Comparator<String> versionPriority() {
        return Comparator.comparing(ResourceCatalog::versionRank).thenComparing(Comparator.naturalOrder());
    }

    private static long versionRank(String v) {
        Matcher m = KUBE_VERSION.matcher(v);
        if (!m.matches()) {
            return Long.MAX_VALUE;
        }
        long major = Long.parseLong(m.group(1));
        if (m.group(2) == null) {
            return -1_000_000_000L + (1000 - major);
        }
        long minor = Long.parseLong(m.group(3));
        long stage = m.group(2).equals("beta") ? 0 : 1_000_000;
        return stage + (1000 - major) * 1000 + (1000 - minor);
    }
}
