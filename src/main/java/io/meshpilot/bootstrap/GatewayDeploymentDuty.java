package io.meshpilot.bootstrap;

import io.meshpilot.config.kube.gateway.GatewayApiController;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.inject.kubegateway.GatewayDeploymentController;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.leaderelection.LeaderElection;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The duty of the {@code istio-gateway-deployment-<rev>} leader: run the deployment controller
 * once the API server serves Gateways, as istiod's leader waits for the Gateway CRD
 * ({@code CrdWatcher().WaitForCRD} in pilot/pkg/bootstrap/configcontroller.go) before it builds
 * the controller. The Gateway API CRDs may be installed after the server started: the Gateway
 * API controller notices the CRD and converts again, and the first conversion that finds
 * Gateways watched builds the controller (once: its informers then run with the client's for
 * good, as istiod's do) and starts it if this replica leads.
 */
final class GatewayDeploymentDuty implements LeaderElection.Duty {
    private static final String GATEWAYS = GatewayApiKinds.RESOURCES.stream()
            .filter(r -> r.kind().equals(GatewayApiKinds.GATEWAY)).findFirst().orElseThrow().informerName();

    private final KubeClient client;
    private final GatewayApiController gatewayApi;
    /** Builds the controller; empty while the API server does not serve Gateways. */
    private final Supplier<Optional<GatewayDeploymentController>> build;
    private GatewayDeploymentController controller;
    private boolean leading;
    private AutoCloseable term;

    GatewayDeploymentDuty(KubeClient client, GatewayApiController gatewayApi,
                          Supplier<Optional<GatewayDeploymentController>> build) {
        this.client = client;
        this.gatewayApi = gatewayApi;
        this.build = build;
        gatewayApi.onConverted(this::gatewaysMayBeWatched);
    }

    @Override
    public synchronized AutoCloseable lead() {
        leading = true;
        startWhenServed();
        return this::stopLeading;
    }

    private synchronized void gatewaysMayBeWatched() {
        if (leading) {
            startWhenServed();
        }
    }

    private void startWhenServed() {
        if (term != null || !gatewayApi.watching().contains(GATEWAYS)) {
            return;
        }
        if (controller == null) {
            controller = build.get().orElse(null);
            if (controller == null) {
                return; // asked again at the next conversion
            }
            client.start(); // the controller's informers, registered with a client that already runs
        }
        term = controller.lead();
    }

    private synchronized void stopLeading() throws Exception {
        leading = false;
        if (term != null) {
            term.close();
            term = null;
        }
    }
}
