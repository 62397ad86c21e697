package io.meshpilot.networking;

import com.google.protobuf.Any;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.TransportSocket;
import io.envoyproxy.envoy.extensions.transport_sockets.internal_upstream.v3.InternalUpstreamTransport;
import io.envoyproxy.envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer;
import io.envoyproxy.envoy.type.metadata.v3.MetadataKind;
import io.meshpilot.api.networking.v1alpha3.ClientTLSSettings;
import io.meshpilot.model.IstioEndpoint;
import java.util.ArrayList;
import java.util.List;

/**
 * The transport of a sidecar's or gateway's outbound cluster while HBONE is sent (istiod's
 * cluster_tls.go applyHBONETransportSocketMatches): a first match {@code hbone} for endpoints
 * marked {@code tunnel: http} ({@link HboneEndpoints}), whose internal upstream hands the
 * endpoint's tunnel and Istio metadata to {@code connect_originate}, before what the cluster had.
 */
final class HboneTransportSockets {
    private static final String RAW_BUFFER = "envoy.transport_sockets.raw_buffer";

    private HboneTransportSockets() {
    }

    /** How the cluster's TLS came about: istiod's three cases. */
    enum Tls {
        /** No TLS settings at all (istiod's nil: mesh-external, auto mTLS off or mTLS disabled). */
        NONE,
        /** Auto mTLS: the {@code tlsMode-istio}/{@code tlsMode-disabled} matches. */
        AUTO,
        /** The DestinationRule's {@code tls}. */
        RULE
    }

    /** Puts the {@code hbone} match before the transport {@code c} has for {@code tls} (and the rule's {@code mode}). */
    static void apply(Cluster.Builder c, Tls tls, ClientTLSSettings.TLSmode mode) {
        if (tls == Tls.NONE) {
            hboneOrPlaintext(c);
            return;
        }
        if (c.getType() == Cluster.DiscoveryType.ORIGINAL_DST) {
            return; // headless services keep their transport, as istiod
        }
        if (tls == Tls.AUTO) {
            List<Cluster.TransportSocketMatch> auto = new ArrayList<>(c.getTransportSocketMatchesList());
            c.clearTransportSocketMatches().addTransportSocketMatches(hbone(rawBuffer())).addAllTransportSocketMatches(auto);
            return;
        }
        if (!c.hasTransportSocket()) {
            hboneOrPlaintext(c); // DISABLE, or a sidecar's rule naming a Secret it may not read
            return;
        }
        TransportSocket ts = c.getTransportSocket();
        c.clearTransportSocket();
        if (mode == ClientTLSSettings.TLSmode.ISTIO_MUTUAL) {
            // HBONE replaces Istio mutual TLS where the endpoint takes it
            c.addTransportSocketMatches(hbone(rawBuffer())).addTransportSocketMatches(
                    Cluster.TransportSocketMatch.newBuilder().setName("tlsMode-istio").setTransportSocket(ts));
        } else {
            // the user's TLS is for the destination: inside the tunnel where there is one
            c.addTransportSocketMatches(hbone(ts)).addTransportSocketMatches(
                    Cluster.TransportSocketMatch.newBuilder().setName("user").setTransportSocket(ts));
        }
    }

    /** istiod's hboneOrPlaintextSocket. */
    private static void hboneOrPlaintext(Cluster.Builder c) {
        c.clearTransportSocketMatches().addTransportSocketMatches(hbone(rawBuffer()))
                .addTransportSocketMatches(Cluster.TransportSocketMatch.newBuilder().setName("tlsMode-disabled")
                        .setMatch(Struct.getDefaultInstance()).setTransportSocket(rawBuffer()));
    }

    /** istiod's hboneTransportSocket: FullMetadataPassthroughInternalUpstreamTransportSocket around {@code inner}. */
    private static Cluster.TransportSocketMatch hbone(TransportSocket inner) {
        InternalUpstreamTransport.Builder t = InternalUpstreamTransport.newBuilder()
                .addPassthroughMetadata(source(true, HboneEndpoints.ORIGINAL_DST_METADATA))
                .addPassthroughMetadata(source(false, TelemetryMetadata.ISTIO))
                .addPassthroughMetadata(source(true, TelemetryMetadata.ISTIO))
                .setTransportSocket(inner);
        return Cluster.TransportSocketMatch.newBuilder().setName("hbone")
                .setMatch(Struct.newBuilder().putFields("tunnel",
                        Value.newBuilder().setStringValue(IstioEndpoint.TUNNEL_HTTP).build()))
                .setTransportSocket(TransportSocket.newBuilder().setName("envoy.transport_sockets.internal_upstream")
                        .setTypedConfig(Any.pack(t.build())))
                .build();
    }

    private static InternalUpstreamTransport.MetadataValueSource source(boolean host, String name) {
        MetadataKind.Builder kind = MetadataKind.newBuilder();
        if (host) {
            kind.setHost(MetadataKind.Host.getDefaultInstance());
        } else {
            kind.setCluster(MetadataKind.Cluster.getDefaultInstance());
        }
        return InternalUpstreamTransport.MetadataValueSource.newBuilder().setKind(kind).setName(name).build();
    }

    private static TransportSocket rawBuffer() {
        return TransportSocket.newBuilder().setName(RAW_BUFFER).setTypedConfig(Any.pack(RawBuffer.getDefaultInstance()))
                .build();
    }
}
