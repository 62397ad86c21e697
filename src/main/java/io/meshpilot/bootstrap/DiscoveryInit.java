package io.meshpilot.bootstrap;

import io.meshpilot.config.Config;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.features.GrpcTransportKind;
import io.meshpilot.grpc.GrpcServices;
import io.meshpilot.lifecycle.StartupRecorder.Built;
import io.meshpilot.model.Environment;
import io.meshpilot.model.PushRequest;
import io.meshpilot.model.TriggerReason;
import io.meshpilot.registry.controller.ServiceRegistries;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.security.jwt.JwksCache;
import io.meshpilot.xds.DiscoveryServer;
import java.util.List;

/** The discovery (xDS) server, and every way a change reaches its push path. */
final class DiscoveryInit {
    private DiscoveryInit() {
    }

    /** The discovery server and the RequestAuthentication key sets it inlines. */
    record Discovery(DiscoveryServer server, JwksCache jwks) {
    }

    static Built<Discovery> discoveryServer(PilotArgs args, Environment environment, ConfigController configs,
                                            GrpcServices grpcServices, Authenticators authenticators,
                                            CredentialsController credentials, List<AutoCloseable> closeables) {
        // istiod's JwtKeyResolver, created with the discovery server: the key sets of
        // RequestAuthentication rules, fetched in the background and inlined by pushes
        JwksCache jwks = new JwksCache(JwksCache.Options.defaults());
        environment.setJwksResolver(jwks);
        // Netty ends connections at the age itself; Helidon (chosen, or hosting the gRPC
        // multiplexed on the http port) has no such limit, so the xDS server ends its streams
        boolean helidonServesGrpc = args.grpcTransport() == GrpcTransportKind.HELIDON || args.listeners().grpc() == null;
        DiscoveryServer discovery = new DiscoveryServer(environment, configs, grpcServices, authenticators, credentials,
                new DiscoveryServer.Options(args.features(), helidonServesGrpc, args.keepalive().maxServerConnectionAge(),
                        args.clusterAliases(), args.kube() == null ? "" : args.kube().identity(), args.namespace()));
        closeables.add(discovery);
        closeables.add(jwks); // closed first: no key set change reaches a stopped discovery server
        return new Built<>(new Discovery(discovery, jwks), "helidonServesGrpc=" + helidonServesGrpc);
    }

    /**
     * istiod's initRegistryEventHandlers, and the other handlers that cross components: every
     * way a change reaches the push path is registered here.
     */
    static String pushHandlers(Discovery discovery, ConfigController configs, Environment environment,
                               CredentialsController credentials) {
        var updates = discovery.server().updates();
        // config -> full push naming the object; ServiceEntry, WorkloadEntry and WorkloadGroup
        // reach the push path through the ServiceEntry registry's service and endpoint updates
        configs.addPushHandler(event -> {
            Config c = event.current() != null ? event.current() : event.old();
            if (!ServiceRegistries.REGISTRY_KINDS.contains(c.gvk().kind())) {
                updates.configUpdate(PushRequest.full(TriggerReason.CONFIG, c.key()));
            }
        });
        // mesh config and networks -> full push (the CA follows the mesh's caCertificates itself)
        environment.addMeshHandler(() -> updates.configUpdate(PushRequest.full(TriggerReason.GLOBAL)));
        environment.addNetworksHandler(() -> updates.configUpdate(PushRequest.full(TriggerReason.NETWORKS)));
        // RequestAuthentication key sets fetched or changed after a push used others -> full push
        // (istiod's JwtKeyResolver.PushFunc, reason unknown)
        discovery.jwks().addChangeHandler(() -> updates.configUpdate(PushRequest.full(TriggerReason.UNKNOWN)));
        // gateway credentials -> SDS push to the proxies that use them
        credentials.addListener(updates::credentialsUpdate);
        return "config, mesh, networks, key sets and credentials to pushes";
    }
}
