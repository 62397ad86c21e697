package io.meshpilot.xds;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.service.status.v3.ClientConfig;
import io.meshpilot.api.workload.security.Authorization;
import java.util.Arrays;

/** The xDS name of a packed resource (delta xDS addresses resources by name). */
final class ResourceNames {
    private ResourceNames() {
    }

    static String of(Any a) {
        try {
            return switch (a.getTypeUrl()) {
                case TypeUrls.LISTENER -> a.unpack(Listener.class).getName();
                case TypeUrls.ROUTE -> a.unpack(RouteConfiguration.class).getName();
                case TypeUrls.CLUSTER -> a.unpack(Cluster.class).getName();
                case TypeUrls.ENDPOINT -> a.unpack(ClusterLoadAssignment.class).getClusterName();
                case TypeUrls.SECRET -> a.unpack(Secret.class)
                        .getName();
                case TypeUrls.EXTENSION_CONFIG -> a.unpack(TypedExtensionConfig.class)
                        .getName();
                // ztunnel's policies: namespace/name, as istiod's WorkloadAuthorization.ResourceName
                case TypeUrls.WORKLOAD_AUTHORIZATION -> {
                    Authorization authz = a.unpack(Authorization.class);
                    yield authz.getNamespace() + "/" + authz.getName();
                }
                // istio.io/debug/syncz: one per proxy, named by its node id as istiod names them
                case TypeUrls.CLIENT_CONFIG -> a.unpack(ClientConfig.class).getNode()
                        .getId();
                default -> "";
            };
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("generated an unreadable " + a.getTypeUrl(), e);
        }
    }

    /** A resource's version for delta xDS: a hash of its bytes, so unchanged resources are not re-sent. */
    static String version(Any a) {
        return Integer.toHexString(Arrays.hashCode(a.getValue().toByteArray()));
    }
}
