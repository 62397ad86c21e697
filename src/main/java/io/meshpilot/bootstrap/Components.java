package io.meshpilot.bootstrap;

import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.grpc.GrpcServices;
import io.meshpilot.inject.SidecarInjector;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.lifecycle.ServerIdentity;
import io.meshpilot.lifecycle.ServerState;
import io.meshpilot.lifecycle.StartupRecorder;
import io.meshpilot.mesh.MeshConfigMapWatcher;
import io.meshpilot.mesh.MeshWatcher;
import io.meshpilot.model.Environment;
import io.meshpilot.registry.controller.ServiceRegistries;
import io.meshpilot.registry.multicluster.RemoteSecretController;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.security.istiod.IstiodCertificates;
import io.meshpilot.webhook.WebhookRoutes;
import io.meshpilot.xds.DiscoveryServer;

/**
 * What {@link PilotServer#newServer} built: every component of one server, fixed once built.
 * The CDI producers and the tests read them from here.
 *
 * @param kubeClient    the Kubernetes client; null in embedded mode
 * @param meshConfigMap the mesh ConfigMap watcher: Kubernetes mode without a --meshConfig file; else null
 * @param remoteSecrets the remote Secrets of other clusters: Kubernetes mode with the Kubernetes registry; else null
 * @param webhooks      the webhooks on the webhook listener; add one before {@link PilotServer#start()}
 */
public record Components(PilotArgs args, ServerIdentity identity, StartupRecorder recorder, Readiness readiness,
                         ServerState state, GrpcServices grpcServices, Authenticators authenticators,
                         CredentialsController credentials, Environment environment, KubeClient kubeClient,
                         MeshWatcher meshWatcher, MeshConfigMapWatcher meshConfigMap, IstiodCertificates certificates,
                         ConfigController configs, ServiceRegistries registries, RemoteSecretController remoteSecrets,
                         DiscoveryServer discovery, SidecarInjector sidecarInjector, WebhookRoutes webhooks) {
}
