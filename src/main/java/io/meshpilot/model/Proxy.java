package io.meshpilot.model;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.meshpilot.api.mesh.v1alpha1.ProxyConfig;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A connected proxy as istiod models it: parsed from the xDS node. The node id is
 * {@code type~ip~id~domain} ({@code sidecar~10.1.1.1~reviews-v1.default~default.svc.cluster.local});
 * the metadata keys are Istio's (NAMESPACE, LABELS, CLUSTER_ID, ISTIO_VERSION, GENERATOR,
 * SERVICE_ACCOUNT, INSTANCE_IPS, NETWORK).
 *
 * @param generator "grpc" for proxyless gRPC clients, else empty (Envoy)
 * @param metadata  the node metadata's string values (istiod's Metadata.Raw as EnvoyFilter's
 *                  {@code match.proxy.metadata} compares it: a value that is not a string never matches)
 * @param istioProxy whether the node is istio-proxy (Envoy with Istio's extensions, run by
 *                  istio-agent): see {@link #isIstioProxy(Node)}
 * @param proxyConfig the workload's effective ProxyConfig istio-agent sends as {@code PROXY_CONFIG}
 *                  (mesh defaults, the pod's {@code proxy.istio.io/config}, ProxyConfig resources);
 *                  null when the node sends none: see {@link #proxyConfigOr}
 */
public record Proxy(String id, Type type, List<String> ips, String workloadId, String dnsDomain, String namespace,
                    Map<String, String> labels, String clusterId, String istioVersion, String generator,
                    String serviceAccount, String network, Locality locality, Map<String, String> metadata,
                    boolean istioProxy, ProxyConfig proxyConfig) {
    /** The node metadata istio-agent always sends: the workload's effective ProxyConfig. */
    static final String PROXY_CONFIG = "PROXY_CONFIG";
    /** The extension istio-proxy's build registers for the {@code istio.stats} filter (istio/proxy). */
    static final String ISTIO_STATS_EXTENSION = "envoy.filters.http.istio_stats";

    /** istiod's node types (pilot/pkg/model/context.go NodeType) this server serves. */
    public enum Type { SIDECAR, ROUTER, ZTUNNEL }

    public Proxy {
        ips = List.copyOf(ips);
        labels = Map.copyOf(labels);
        metadata = Map.copyOf(metadata);
    }

    /** A proxy that sends no ProxyConfig. */
    public Proxy(String id, Type type, List<String> ips, String workloadId, String dnsDomain, String namespace,
                 Map<String, String> labels, String clusterId, String istioVersion, String generator,
                 String serviceAccount, String network, Locality locality, Map<String, String> metadata,
                 boolean istioProxy) {
        this(id, type, ips, workloadId, dnsDomain, namespace, labels, clusterId, istioVersion, generator,
                serviceAccount, network, locality, metadata, istioProxy, null);
    }

    /** A proxy that is not istio-proxy (plain Envoy or a proxyless client). */
    public Proxy(String id, Type type, List<String> ips, String workloadId, String dnsDomain, String namespace,
                 Map<String, String> labels, String clusterId, String istioVersion, String generator,
                 String serviceAccount, String network, Locality locality, Map<String, String> metadata) {
        this(id, type, ips, workloadId, dnsDomain, namespace, labels, clusterId, istioVersion, generator,
                serviceAccount, network, locality, metadata, false);
    }

    /** A proxy without other node metadata than these fields. */
    public Proxy(String id, Type type, List<String> ips, String workloadId, String dnsDomain, String namespace,
                 Map<String, String> labels, String clusterId, String istioVersion, String generator,
                 String serviceAccount, String network, Locality locality) {
        this(id, type, ips, workloadId, dnsDomain, namespace, labels, clusterId, istioVersion, generator,
                serviceAccount, network, locality, Map.of());
    }

    /** The same proxy in another cluster (istiod's --clusterAliases). */
    public Proxy withClusterId(String cluster) {
        return new Proxy(id, type, ips, workloadId, dnsDomain, namespace, labels, cluster, istioVersion, generator,
                serviceAccount, network, locality, metadata, istioProxy, proxyConfig);
    }

    /**
     * The ProxyConfig to build this proxy's config with: its own, else {@code meshDefault} (the
     * mesh's {@code defaultConfig}), as istiod's {@code ProxyConfigOrDefault}.
     */
    public ProxyConfig proxyConfigOr(ProxyConfig meshDefault) {
        return proxyConfig != null ? proxyConfig : meshDefault;
    }

    public boolean proxyless() {
        return "grpc".equals(generator);
    }

    /** Parses a node; throws IllegalArgumentException naming what is wrong. */
    public static Proxy fromNode(Node node) {
        String id = node.getId();
        String[] parts = id.split("~", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException("node id \"" + id + "\" is not type~ip~id~domain");
        }
        Type type = switch (parts[0]) {
            case "sidecar" -> Type.SIDECAR;
            case "router" -> Type.ROUTER;
            case "ztunnel" -> Type.ZTUNNEL;
            default -> throw new IllegalArgumentException("node id \"" + id + "\": unknown proxy type \"" + parts[0]
                    + "\" (sidecar, router or ztunnel)");
        };
        Struct md = node.getMetadata();
        String instanceIps = string(md, "INSTANCE_IPS");
        List<String> ips = instanceIps.isEmpty() ? List.of(parts[1]) : Arrays.asList(instanceIps.split(","));
        String namespace = string(md, "NAMESPACE");
        if (namespace.isEmpty()) {
            int dot = parts[2].lastIndexOf('.');
            namespace = dot >= 0 ? parts[2].substring(dot + 1)
                    : parts[3].contains(".") ? parts[3].substring(0, parts[3].indexOf('.')) : "default";
        }
        Map<String, String> labels = new HashMap<>();
        Value l = md.getFieldsOrDefault("LABELS", Value.getDefaultInstance());
        if (l.hasStructValue()) {
            l.getStructValue().getFieldsMap().forEach((k, v) -> labels.put(k, v.getStringValue()));
        }
        var loc = node.getLocality();
        Locality locality = new Locality(loc.getRegion(), loc.getZone(), loc.getSubZone());
        String istioVersion = string(md, "ISTIO_VERSION");
        return new Proxy(id, type, ips, parts[2], parts[3], namespace, labels, string(md, "CLUSTER_ID"),
                istioVersion, string(md, "GENERATOR"), string(md, "SERVICE_ACCOUNT"), string(md, "NETWORK"), locality,
                stringValues(md), isIstioProxy(node), proxyConfig(md));
    }

    /**
     * istio-agent's {@code PROXY_CONFIG} as a ProxyConfig. Unknown fields are skipped (a newer
     * agent), but a value that is not a ProxyConfig refuses the node, as istiod's
     * NodeMetaProxyConfig does (UnmarshalAllowUnknown fails the metadata parse).
     */
    private static ProxyConfig proxyConfig(Struct md) {
        Value v = md.getFieldsOrDefault(PROXY_CONFIG, null);
        if (v == null) {
            return null;
        }
        if (!v.hasStructValue()) {
            throw new IllegalArgumentException("node metadata PROXY_CONFIG is not a ProxyConfig object");
        }
        try {
            ProxyConfig.Builder b = ProxyConfig.newBuilder();
            JsonFormat.parser().ignoringUnknownFields().merge(JsonFormat.printer().print(v.getStructValue()), b);
            return b.build();
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("node metadata PROXY_CONFIG is not a ProxyConfig: " + e.getMessage());
        }
    }

    /**
     * istio-proxy, as opposed to plain Envoy: istio-agent's {@code PROXY_CONFIG} metadata, or an
     * Envoy build that lists Istio's stats extension in {@code Node.extensions}. istiod writes
     * Istio's own filters (stats, metadata exchange) for every proxy; plain Envoy would NACK
     * their typed configs, so MeshPilot writes them only for these nodes.
     */
    static boolean isIstioProxy(Node node) {
        if (node.getMetadata().containsFields(PROXY_CONFIG)) {
            return true;
        }
        return node.getExtensionsList().stream().anyMatch(e -> e.getName().equals(ISTIO_STATS_EXTENSION));
    }

    private static Map<String, String> stringValues(Struct md) {
        Map<String, String> out = new HashMap<>();
        md.getFieldsMap().forEach((k, v) -> {
            if (v.hasStringValue()) {
                out.put(k, v.getStringValue());
            }
        });
        return out;
    }

    private static String string(Struct md, String key) {
        Value v = md.getFieldsOrDefault(key, Value.getDefaultInstance());
        return v.hasStringValue() ? v.getStringValue() : "";
    }
}
