package io.meshpilot.bootstrap;

import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.lifecycle.Component;
import io.meshpilot.lifecycle.ComponentStartException;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.lifecycle.StartupRecorder.Built;
import io.meshpilot.model.Environment;
import io.meshpilot.registry.controller.ServiceRegistries;
import io.meshpilot.registry.multicluster.RemoteSecretController;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.xds.DiscoveryServer;
import java.util.List;

/** The service registries: those --registries names, over the ServiceEntry registry, and remote clusters. */
final class RegistryInit {
    private RegistryInit() {
    }

    /** The registries, and the remote Secrets that add clusters to them (null without remote clusters). */
    record Registries(ServiceRegistries registries, RemoteSecretController remoteSecrets) {
    }

    /** istiod's initServiceControllers. */
    static Built<Registries> serviceControllers(PilotArgs args, Platform platform, ConfigController configs,
                                                DiscoveryServer discovery, Environment environment,
                                                Readiness readiness, CredentialsController credentials,
                                                List<AutoCloseable> closeables) {
        ServiceRegistries registries;
        try {
            registries = new ServiceRegistries(new ServiceRegistries.Options(args.registries(), args.clusterId(),
                    args.namespace(), args.features().registry(), platform.client(),
                    args.features().ambient()),
                    configs.store(), discovery.updates(), environment, readiness);
            closeables.add(registries::close);
        } catch (ServiceRegistries.UnsupportedRegistryException e) {
            throw new ComponentStartException(Component.SERVICE_REGISTRIES, e.getMessage(), e);
        }
        RemoteSecretController remoteSecrets = platform.watchRemoteClusters(registries, credentials, closeables);
        return new Built<>(new Registries(registries, remoteSecrets),
                registries.describe() + (remoteSecrets == null ? "" : "; " + remoteSecrets.describe()));
    }
}
