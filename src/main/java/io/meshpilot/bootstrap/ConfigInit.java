package io.meshpilot.bootstrap;

import io.meshpilot.config.ConfigRevision;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.lifecycle.Component;
import io.meshpilot.lifecycle.ComponentStartException;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.lifecycle.StartupRecorder.Built;
import io.meshpilot.mesh.MeshConfigException;
import io.meshpilot.mesh.MeshConfigMapWatcher;
import io.meshpilot.mesh.MeshWatcher;
import io.meshpilot.model.Environment;
import io.meshpilot.security.credentials.CredentialsController;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;

/** The configuration the server reads: the mesh config and networks, the Istio config stores, the credentials. */
final class ConfigInit {
    private ConfigInit() {
    }

    /** The mesh config file and, in a cluster without one, the istio ConfigMap that replaces it. */
    record MeshWatchers(MeshWatcher file, MeshConfigMapWatcher configMap) {
    }

    static Built<MeshWatchers> meshWatchers(PilotArgs args, Environment environment, Platform platform,
                                           List<AutoCloseable> closeables) throws IOException {
        MeshWatcher file = new MeshWatcher(environment, args.meshConfigFile(), args.networksConfigFile());
        closeables.add(file);
        String detail;
        try {
            detail = file.start();
        } catch (MeshConfigException e) {
            throw new ComponentStartException(Component.MESH_WATCHERS, "invalid mesh config " + e.getMessage(), e);
        }
        // istiod: a mesh config file wins; without one, the cluster's istio ConfigMap
        MeshConfigMapWatcher configMap = Files.exists(args.meshConfigFile()) ? null : platform.meshConfigMap(environment);
        if (configMap != null) {
            closeables.add(configMap);
            detail = configMap.start();
        }
        return new Built<>(new MeshWatchers(file, configMap), detail);
    }

    /** istiod's initConfigController: the config source chosen from the mesh config and flags, and the credentials. */
    static Built<ConfigController> configController(PilotArgs args, Environment environment, Platform platform,
                                                    Readiness readiness, CredentialsController credentials,
                                                    List<AutoCloseable> closeables) throws IOException {
        ConfigController.Sources sources;
        try {
            sources = ConfigController.Sources.choose(args.configDir(), args.configStateDir(),
                    environment.mesh().getConfigSourcesList().stream().map(c -> c.getAddress()).toList(),
                    platform.client() != null);
        } catch (IllegalArgumentException e) {
            throw new ComponentStartException(Component.CONFIG_STORES, e.getMessage(), e);
        }
        platform.watchDiscoverySelectors(environment);
        ConfigController configs = new ConfigController(sources, readiness, platform.client(),
                args.features().enhancedResourceScoping(), new ConfigRevision(args.revision()));
        closeables.add(configs);
        platform.ingressController(environment).ifPresent(configs::serveIngress);
        platform.gatewayApiController().ifPresent(controller -> {
            // the grants in force reach SDS through the next push context (istiod's PushContext.SecretAllowed),
            // published before the converted config whose events start that push
            controller.onReferenceGrants(environment::setReferenceGrants);
            configs.serveGatewayApi(controller);
        });
        String detail;
        try {
            detail = configs.start();
        } catch (IOException e) {
            throw new ComponentStartException(Component.CONFIG_STORES, e.getMessage(), e);
        }
        closeables.add(credentials);
        detail += platform.watchCredentials(credentials, closeables);
        return new Built<>(configs, detail + configs.ingress().map(i -> " ingress=" + args.features().ingressNamespace())
                .orElse("") + configs.gatewayApi().map(g -> " gateway-api=" + args.features().gatewayApi().controllerName())
                .orElse(""));
    }
}
