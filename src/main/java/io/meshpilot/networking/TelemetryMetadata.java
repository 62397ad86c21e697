package io.meshpilot.networking;

import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Service;
import java.util.List;
import java.util.Map;

/**
 * The {@code istio} filter metadata istiod writes on clusters and endpoints for istio-proxy's
 * stats filter and for istioctl: a cluster's services ({@code services}: host, name, namespace;
 * addTelemetryMetadata, PILOT_ENABLE_TELEMETRY_LABEL's default), the DestinationRule it was built
 * from ({@code config}: AddConfigInfoMetadata, istioctl's proxy-config cluster reads it), and an
 * endpoint's workload ({@code workload}: {@code name;namespace;canonical name;canonical
 * revision;cluster}, AppendLbEndpointMetadata, PILOT_ENDPOINT_TELEMETRY_LABEL's default), which the
 * stats filter falls back to when the peer exchanged no metadata (a server without a sidecar, a
 * request that failed before the response).
 */
public final class TelemetryMetadata {
    static final String ISTIO = "istio";
    private static final List<String> NAME_LABELS = List.of("service.istio.io/canonical-name", "app.kubernetes.io/name", "app");
    private static final List<String> REVISION_LABELS = List.of("service.istio.io/canonical-revision",
            "app.kubernetes.io/version", "version");

    private TelemetryMetadata() {
    }

    /** {@code cluster} with {@code services} in its {@code istio} metadata (outbound: the one service; inbound: those on the port). */
    public static void addServices(Cluster.Builder cluster, List<Service> services) {
        if (services.isEmpty()) {
            return;
        }
        ListValue.Builder list = ListValue.newBuilder();
        for (Service s : services) {
            list.addValues(Value.newBuilder().setStructValue(Struct.newBuilder()
                    .putFields("host", string(s.hostname()))
                    .putFields("name", string(serviceName(s)))
                    .putFields("namespace", string(s.namespace()))));
        }
        putIstio(cluster, "services", Value.newBuilder().setListValue(list).build());
    }

    /** {@code cluster} naming the DestinationRule it was built with, as istiod's {@code /apis/...} path. */
    public static void addConfig(Cluster.Builder cluster, ConfigKey destinationRule) {
        putIstio(cluster, "config", string("/apis/networking.istio.io/v1/namespaces/" + destinationRule.namespace()
                + "/destination-rule/" + destinationRule.name()));
    }

    /**
     * An endpoint's metadata: its workload for telemetry and, unless Istio mTLS is disabled for
     * it, its {@code tlsMode} for the cluster's transport-socket match.
     */
    public static Metadata endpoint(IstioEndpoint e) {
        Map<String, String> labels = e.labels();
        String revision = first(labels, REVISION_LABELS, "latest");
        String workload = e.workloadName() + ";" + e.namespace() + ";" + first(labels, NAME_LABELS, e.workloadName())
                + ";" + ("latest".equals(revision) ? "" : revision) + ";"
                + e.clusterId();
        Metadata.Builder m = Metadata.newBuilder()
                .putFilterMetadata(ISTIO, Struct.newBuilder().putFields("workload", string(workload)).build());
        if (!e.tlsMode().isEmpty() && !IstioEndpoint.TLS_DISABLED.equals(e.tlsMode())) {
            m.putFilterMetadata("envoy.transport_socket_match", Struct.newBuilder()
                    .putFields("tlsMode", string(e.tlsMode())).build());
        }
        return m.build();
    }

    /** istiod's Attributes.Name: a ServiceEntry's host is its name; a Kubernetes Service's is the host's first label. */
    static String serviceName(Service s) {
        if (s.configKey() != null) {
            return s.hostname();
        }
        int dot = s.hostname().indexOf('.');
        return dot < 0 ? s.hostname() : s.hostname().substring(0, dot);
    }

    private static void putIstio(Cluster.Builder cluster, String key, Value value) {
        Metadata.Builder m = cluster.getMetadataBuilder();
        m.putFilterMetadata(ISTIO, m.getFilterMetadataOrDefault(ISTIO, Struct.getDefaultInstance()).toBuilder()
                .putFields(key, value).build());
    }

    private static String first(Map<String, String> labels, List<String> keys, String otherwise) {
        for (String k : keys) {
            String v = labels.get(k);
            if (v != null) {
                return v;
            }
        }
        return otherwise;
    }

    private static Value string(String s) {
        return Value.newBuilder().setStringValue(s).build();
    }
}
