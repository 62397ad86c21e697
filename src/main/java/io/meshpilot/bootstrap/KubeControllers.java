package io.meshpilot.bootstrap;

import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.config.kube.gateway.GatewayApiStatusWriter;
import io.meshpilot.config.kube.gateway.GatewayClassController;
import io.meshpilot.config.kube.ingress.IngressStatusWriter;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.inject.kubegateway.GatewayDeploymentController;
import io.meshpilot.kube.ElectionTimings;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.controllers.SyncWaiter;
import io.meshpilot.kube.leaderelection.DefaultRevision;
import io.meshpilot.kube.leaderelection.LeaderElection;
import io.meshpilot.kube.leaderelection.RevisionPriority;
import io.meshpilot.lifecycle.Component;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.model.TriggerReason;
import io.meshpilot.registry.controller.ServiceRegistries;
import io.meshpilot.registry.multicluster.RemoteSecretController;
import io.meshpilot.security.istiod.IstiodCertificates;
import io.meshpilot.security.kube.NamespaceController;
import io.meshpilot.status.StatusWriter;
import io.meshpilot.webhook.WebhookConfigPatcher;
import io.meshpilot.xds.DiscoveryServer;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The controllers that write to the cluster: the namespace controller, the two webhook
 * patchers and the status writer, behind istiod's leader elections. Their informers are
 * registered when built, before the client's informers start; the elections start once the
 * informers have synced. Each is closed with the server, before the listeners.
 */
final class KubeControllers {
    private static final System.Logger LOG = System.getLogger("io.meshpilot.startup");

    private final PilotArgs args;
    private final KubeClient client;
    private final ServiceRegistries registries;
    private final RemoteSecretController remoteSecrets;
    /** Null without a CA (ENABLE_CA_SERVER=false). */
    private final LeaderElection namespaceControllerElection;
    private final WebhookConfigPatcher injectionPatcher;
    private final LeaderElection validationControllerElection;
    /** The status leader election (PILOT_ENABLE_STATUS or PILOT_ENABLE_ANALYSIS); null when off. */
    private final LeaderElection statusElection;
    /** The ingress status election (istio-leader); null when no Ingress is served. */
    private final LeaderElection ingressStatusElection;
    /** The Gateway API deployment controller's election; null when it is off or the API server's version cannot be read. */
    private final LeaderElection gatewayDeploymentElection;
    /** The Gateway API status election (istio-gateway-status-leader-<rev>); null when none is written. */
    private final LeaderElection gatewayApiStatusElection;
    /** istiod's built-in GatewayClasses (every replica); null when off. */
    private final GatewayClassController gatewayClasses;
    /** Deadline of the informers' and the registries' sync, counted from the start of the start functions. */
    private Instant syncDeadline;

    KubeControllers(PilotArgs args, KubeClient client, IstiodCertificates certificates, ConfigController configs,
                    DiscoveryServer discovery, ServiceRegistries registries, RemoteSecretController remoteSecrets,
                    UnaryOperator<String> revisionTags) {
        this.args = args;
        this.client = client;
        this.registries = registries;
        this.remoteSecrets = remoteSecrets;
        this.namespaceControllerElection = namespaceController(certificates);
        Supplier<String> root = () -> certificates.trustBundle().pem();
        // istiod's validation controller and injection webhook patcher: the CA root into the
        // caBundle of this revision's webhook configurations, and the validating ones switched to
        // failurePolicy Fail once the webhook is seen refusing. The validating ones are patched by
        // the holder of the validation-controller Lease; the injection ones by every replica (istiod:
        // they all patch the same root in).
        WebhookConfigPatcher validation = WebhookConfigPatcher.validating(client, args.namespace(), args.revision(), root);
        this.injectionPatcher = WebhookConfigPatcher.injection(client, args.namespace(), args.revision(), root);
        certificates.addTrustBundleListener(validation::caBundleChanged);
        certificates.addTrustBundleListener(injectionPatcher::caBundleChanged);
        this.validationControllerElection = election(LeaderElection.VALIDATION_CONTROLLER)
                .addDuty("validation controller", validation::lead);
        this.statusElection = statusController(configs, discovery);
        this.ingressStatusElection = configs.ingress().map(ingress -> election(LeaderElection.INGRESS_CONTROLLER)
                .addDuty("ingress status writer", new IngressStatusWriter(client, ingress)::lead)).orElse(null);
        var gatewayApi = args.features().gatewayApi();
        configs.gatewayApi().ifPresent(controller -> {
            // istiod's GatewayContext reads the push's services; their changes convert again
            var kube = registries.kubernetes();
            controller.useServices(new RegistryGatewayServices(registries.aggregate(),
                    kube == null ? (host, ns) -> Optional.empty() : kube::external));
            registries.aggregate().appendServiceHandler(event -> controller.servicesChanged());
            if (registries.ambient() != null) {
                // istiod's ambient index reads its waypoints from the Gateways' status addresses
                controller.onGatewayEvent(() -> registries.ambient().gatewaysChanged(controller.gateways()));
            }
            // a gateway's pods becoming ready change only its Service's endpoints (EDS requests),
            // its load balancer's address only the Service's status (the model is unchanged)
            discovery.updates().addListener(request -> {
                if (request.reasons().contains(TriggerReason.ENDPOINT) || request.reasons().contains(TriggerReason.SERVICE)) {
                    request.configsUpdated().forEach(service -> controller.gatewayServiceChanged(service.name()));
                }
            });
        });
        this.gatewayApiStatusElection = configs.gatewayApi().filter(c -> gatewayApi.status())
                .map(c -> perRevisionElection(LeaderElection.GATEWAY_STATUS_CONTROLLER)
                        .addDuty("gateway api status writer", new GatewayApiStatusWriter(client, c)::lead))
                .orElse(null);
        this.gatewayClasses = configs.gatewayApi().filter(c -> gatewayApi.gatewayClassController())
                .map(c -> new GatewayClassController(client, c, gatewayApi.defaultGatewayClass(), gatewayApi.controllerName(),
                        gatewayApi.multiNetwork(), args.features().ambient().waypoints()))
                .orElse(null);
        // istiod builds it only with the Gateway API on
        this.gatewayDeploymentElection = configs.gatewayApi().isEmpty() || !gatewayApi.deploymentController() ? null
                : GatewayDeploymentController.forServer(client, args.namespace(), args.revision(),
                        args.clusterId(), revisionTags, gatewayApi.manualDeployment(), args.features().ambient().waypoints(),
                        () -> discovery.currentPushContext().mesh())
                .map(c -> perRevisionElection(GatewayDeploymentController.ELECTION)
                        .addDuty("gateway deployment controller", c::lead)).orElse(null);
    }

    /** istiod's per-revision elections: one leader per revision, no revision preferred. */
    private LeaderElection perRevisionElection(String name) {
        return new LeaderElection(client.apiClient(), args.namespace(), LeaderElection.perRevision(name, args.revision()),
                args.kube().identity(), ElectionTimings.fromTtl(args.kube().leaderElectionTtl()));
    }

    /**
     * istiod's initNamespaceController: istio-ca-root-cert in every selected namespace, written
     * only by the replica holding the namespace-controller Lease. None without a CA (istiod's
     * shouldStartNsController): under ENABLE_CA_SERVER=false istio-csr writes those ConfigMaps.
     */
    private LeaderElection namespaceController(IstiodCertificates certificates) {
        if (!certificates.caEnabled()) {
            return null;
        }
        NamespaceController controller = new NamespaceController(client, () -> certificates.trustBundle().pem());
        certificates.addTrustBundleListener(controller::trustBundleChanged);
        return election(LeaderElection.NAMESPACE_CONTROLLER).addDuty("namespace controller", controller::lead);
    }

    /**
     * istiod's status controller: the leader of {@code istio-status-leader} writes the
     * Reconciled condition, observedGeneration and validation messages of the cluster's Istio
     * objects. Started once the first push exists, since it reports on the pushes.
     */
    private LeaderElection statusController(ConfigController configs, DiscoveryServer discovery) {
        var settings = args.features().status();
        var store = configs.clusterStore();
        if (!settings.enabled() || store.isEmpty()) {
            return null;
        }
        StatusWriter writer = new StatusWriter(store.get(), configs.schemas().all(), discovery::status, settings,
                statusWritesPerPass(settings));
        return election(LeaderElection.STATUS_CONTROLLER).addDuty("status writer", writer::lead);
    }

    /**
     * Status writes go through the one throttled client (istiod gives them a client of their
     * own): a pass may use half of what --kubernetesApiQPS allows over an interval.
     */
    private int statusWritesPerPass(PilotFeatures.Status settings) {
        double perInterval = args.kube().qps() * settings.updateInterval().toNanos() / 1e9;
        return (int) Math.max(1, Math.floor(perInterval / 2));
    }

    /**
     * One of istiod's elections in the istiod namespace, with istiod's timings and, with
     * PRIORITIZED_LEADER_ELECTION, the default revision preferred (istiod prioritises each
     * election this way).
     */
    private LeaderElection election(String name) {
        return new LeaderElection(client.apiClient(), args.namespace(), name, args.kube().identity(),
                ElectionTimings.fromTtl(args.kube().leaderElectionTtl()),
                args.features().prioritizedLeaderElection()
                        ? new RevisionPriority(args.revision(), new DefaultRevision(client.apiClient()))
                        : null);
    }

    String describe() {
        return (namespaceControllerElection == null ? "" : "namespace controller, ")
                + "validation and injection webhook patchers"
                + (statusElection == null ? "" : ", status writer")
                + (ingressStatusElection == null ? "" : ", ingress status writer")
                + (gatewayDeploymentElection == null ? "" : ", gateway deployment controller")
                + (gatewayClasses == null ? "" : ", gatewayclass controller")
                + (gatewayApiStatusElection == null ? "" : ", gateway api status writer");
    }

    /** The start functions, in istiod's order; each puts what it starts among what the server closes. */
    Platform.StartPhases startPhases(List<AutoCloseable> closeables) {
        List<StartFunction> beforeConfigSync = List.of(
                step("injection-webhook-patcher", () -> {
                    syncDeadline = Instant.now().plus(args.kube().syncTimeout());
                    // the elections close after the patcher, whether they started or not
                    if (namespaceControllerElection != null) {
                        closeables.add(namespaceControllerElection);
                    }
                    closeables.add(validationControllerElection);
                    closeables.add(injectionPatcher.lead());
                    return null;
                }),
                // istiod's kubeClient.RunAndWait: informers start last and are waited for, bounded
                step("kube-informers", () -> {
                    client.runAndWait(args.kube().syncTimeout());
                    return null;
                }),
                step("namespace-controller", () -> namespaceControllerElection == null ? null
                        : startElection(namespaceControllerElection)),
                step("validation-webhook-patcher", () -> startElection(validationControllerElection)));
        List<StartFunction> afterConfigSync = new ArrayList<>(List.of(step("registries-synced", () -> {
            awaitRegistriesSynced();
            return null;
        })));
        if (gatewayClasses != null) {
            afterConfigSync.add(step("gatewayclass-controller", () -> {
                closeables.add(gatewayClasses);
                gatewayClasses.start();
                return null;
            }));
        }
        List<StartFunction> afterFirstPush = new ArrayList<>();
        if (statusElection != null) {
            afterFirstPush.add(step("status-controller", () -> {
                closeables.add(statusElection);
                return startElection(statusElection);
            }));
        }
        if (ingressStatusElection != null) {
            afterFirstPush.add(step("ingress-status", () -> {
                closeables.add(ingressStatusElection);
                return startElection(ingressStatusElection);
            }));
        }
        if (gatewayDeploymentElection != null) { // renders with the first push's mesh config
            afterFirstPush.add(step("gateway-deployment", () -> {
                closeables.add(gatewayDeploymentElection);
                return startElection(gatewayDeploymentElection);
            }));
        }
        if (gatewayApiStatusElection != null) {
            afterFirstPush.add(step("gateway-api-status", () -> {
                closeables.add(gatewayApiStatusElection);
                return startElection(gatewayApiStatusElection);
            }));
        }
        return new Platform.StartPhases(this::registerProbes, beforeConfigSync, List.copyOf(afterConfigSync),
                List.copyOf(afterFirstPush));
    }

    /** Readiness names each informer still not synced, and the remote Secrets until they have. */
    private void registerProbes(Readiness readiness) {
        readiness.registerGroup("kube-informer-synced", client::notSynced);
        if (remoteSecrets != null) {
            readiness.register("remote-secrets-synced", remoteSecrets::hasSynced);
        }
    }

    private static StartFunction step(String name, StartFunction.Step run) {
        return new StartFunction(Component.START_FUNCTIONS, name, run);
    }

    private static String startElection(LeaderElection election) {
        LOG.log(Level.INFO, "leader election: " + election.start());
        return null;
    }

    /**
     * istiod's waitForCacheSync: the informers having listed is not enough, the registries must
     * also have converted what they listed (the Kubernetes registry does it on its own queue),
     * else the first push and the first proxies get services without their endpoints. Bounded
     * by the same deadline as the informers' wait: with the API server down the server starts
     * not ready, as there.
     */
    private void awaitRegistriesSynced() throws InterruptedException {
        if (remoteSecrets != null) { // first: the remote clusters of the Secrets there join the registries
            SyncWaiter.await(remoteSecrets.synced(), Duration.between(Instant.now(), syncDeadline));
        }
        SyncWaiter.await(registries.aggregate().synced(), Duration.between(Instant.now(), syncDeadline));
    }
}
