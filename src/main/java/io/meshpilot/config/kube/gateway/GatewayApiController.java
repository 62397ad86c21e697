package io.meshpilot.config.kube.gateway;

import com.google.gson.JsonObject;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.store.ConvertedConfigStore;
import io.meshpilot.config.store.MemoryConfigStore;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * istiod's Gateway API controller (pilot/pkg/config/kube/gateway/controller.go) on the
 * controller kit: reads the Gateway API objects and what they refer to
 * ({@link GatewayApiInformers}), converts the whole snapshot with the conversion
 * and serves the Istio Gateways, VirtualServices and DestinationRules it yields in its read-only
 * store (a {@link ConvertedConfigStore}); the statuses it yields are for {@link GatewayApiStatusWriter}.
 *
 * <p>The conversion spans objects (routes attach to other namespaces' Gateways), so every change
 * queues the one key {@value #CONVERT}: a burst of changes while a conversion runs is one more
 * conversion of the latest state (istiod reconverts on each push). Service changes convert again
 * too ({@link #servicesChanged}), and endpoint changes of the services serving Gateways
 * ({@link #gatewayServiceChanged}). A status-only change of an object (the status writer's own
 * writes) converts to the same config and does not queue one. Only objects that really changed
 * are put into the store, so no config event follows a conversion that changed nothing and a push
 * cannot start the next conversion in a loop.
 *
 * <p>What the conversion reports it could not convert is logged once per change, by object, and
 * listed by {@link #errors()} (the config-errors API). A conversion that throws is logged and the
 * config of the last one keeps being served.
 */
public final class GatewayApiController implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GatewayApiController.class.getName());
    private static final String CONVERT = "convert";
    private static final String CRD_PREFIX = "crd ";
    /** Where config errors say they come from. */
    private static final String SOURCE = "kubernetes gateway.networking.k8s.io";
    private static final Backoff RETRY = Backoff.fixed(Duration.ofSeconds(1));
    static final List<String> SERVED_KINDS = List.of("Gateway", "VirtualService", "DestinationRule");

    private final GatewayApiInformers informers;
    private final GatewayApiRevision revision;
    private final GatewayApiInputs.Settings settings;
    private final Function<GatewayApiInputs, ConversionResult> conversion;
    private final MemoryConfigStore converted;
    private final ConvertedConfigStore store;
    private final ControllerQueue<String> queue = new ControllerQueue<>("gateway-api-controller", RETRY, this::reconcile);
    private final List<Runnable> convertedHandlers = new CopyOnWriteArrayList<>();
    private final List<Consumer<ReferenceGrants>> grantHandlers = new CopyOnWriteArrayList<>();
    private volatile GatewayServices services = GatewayServices.NONE;
    private volatile Map<ConfigKey, List<String>> problems = Map.of();
    private volatile ConversionResult lastResult = new ConversionResult(List.of(), List.of(),
            List.of(), Map.of(), Map.of());
    private ControllerQueue<String>.Term term;
    /** The services ({@code internal.istio.io/gateway-service}) serving the Gateways of the last conversion. */
    private volatile Set<String> gatewayServiceHosts = Set.of();
    /** The ReferenceGrants of the last conversion's snapshot. */
    private volatile ReferenceGrants referenceGrants = ReferenceGrants.NONE;

    /**
     * Registers the informers with {@code client} (they start with its informers).
     *
     * @param conversion the snapshot to the config and statuses to serve (istiod's rules:
     *                   {@code convert.GatewayApiConversion::convert}, which lies above this package)
     */
    public GatewayApiController(KubeClient client, GatewayApiRevision revision, GatewayApiInputs.Settings settings,
                                Function<GatewayApiInputs, ConversionResult> conversion) {
        this.revision = revision;
        this.settings = settings;
        this.conversion = conversion;
        this.converted = new MemoryConfigStore("gateway-api", SERVED_KINDS.stream()
                .map(k -> Schemas.PILOT.forKind(k).orElseThrow()).toList(), false);
        this.store = new ConvertedConfigStore(converted,
                "converted from Kubernetes Gateway API: change the Gateway API object instead", this::start, this::synced,
                this::errors);
        this.informers = new GatewayApiInformers(client, revision, crd -> queue.add(CRD_PREFIX + crd),
                () -> queue.add(CONVERT));
    }

    /** The read-only store of the converted config, for the aggregate cache. */
    public ConvertedConfigStore store() {
        return store;
    }

    /**
     * The services backends and Gateway addresses are checked against (the registries, known
     * only once they are built); converts again.
     */
    public void useServices(GatewayServices services) {
        this.services = Objects.requireNonNull(services);
        servicesChanged();
    }

    /** A service changed: backends may now resolve, Gateways be programmed. */
    public void servicesChanged() {
        queue.add(CONVERT);
    }

    /**
     * The endpoints or the Kubernetes Service (its load balancer status included) of service
     * {@code hostname} changed. Converts again when a Gateway of the last conversion is served by
     * it: its addresses and Programmed condition follow its instances and load balancer (istiod
     * rebuilds its GatewayContext on the full push a gateway's first endpoints cause). Other
     * services' endpoints do not matter to the conversion.
     */
    public void gatewayServiceChanged(String hostname) {
        if (gatewayServiceHosts.contains(hostname)) {
            queue.add(CONVERT);
        }
    }

    /** The Gateways this control plane reads, with their status (the ambient index's waypoints are some of them). */
    public List<GatewayApiObject> gateways() {
        return informers.objects().stream().filter(o -> o.kind().equals(GatewayApiKinds.GATEWAY)).toList();
    }

    /**
     * Runs {@code handler} on the informers' thread at every Gateway event, status changes
     * included (they convert to nothing new, so no conversion follows them).
     */
    public void onGatewayEvent(Runnable handler) {
        informers.addObjectListener(key -> {
            if (key.kind().equals(GatewayApiKinds.GATEWAY)) {
                handler.run();
            }
        });
    }

    /** Runs {@code handler} on the controller's worker after each conversion (the status writer queues its keys). */
    public void onConverted(Runnable handler) {
        convertedHandlers.add(handler);
    }

    /**
     * Hands {@code handler} the ReferenceGrants of each conversion's snapshot on the controller's
     * worker before its config is served or withdrawn, so the push that config starts reads them.
     */
    public void onReferenceGrants(Consumer<ReferenceGrants> handler) {
        grantHandlers.add(handler);
    }

    /**
     * The ReferenceGrants of the last conversion: SDS authorises a gateway's cross-namespace
     * {@code kubernetes-gateway://} Secrets by them (istiod's PushContext.SecretAllowed).
     */
    public ReferenceGrants referenceGrants() {
        return referenceGrants;
    }

    /** The statuses of the last conversion, by object. */
    Map<ConfigKey, JsonObject> statuses() {
        return lastResult.statuses();
    }

    GatewayApiRevision revision() {
        return revision;
    }

    GatewayApiInformers informers() {
        return informers;
    }

    String controllerName() {
        return settings.controllerName();
    }

    /** The Gateway API kinds watched now, as {@code group/version/plural}. */
    public List<String> watching() {
        return informers.watching();
    }

    synchronized void start() {
        if (term == null) {
            term = queue.start(informers.baseSynced(), () -> {
                informers.crdNames().forEach(name -> queue.add(CRD_PREFIX + name));
                queue.add(CONVERT);
            });
        }
    }

    /**
     * Completes once the CRDs were looked at, the kinds they allow listed, and their objects
     * converted.
     */
    CompletableFuture<Void> synced() {
        return queue.synced().thenCompose(crdsSeen -> informers.kindsSynced()).thenCompose(kindsListed -> {
            queue.add(CONVERT);
            return queue.barrier();
        });
    }

    /** Completes once every change queued so far has been converted. */
    CompletableFuture<Void> barrier() {
        return queue.barrier();
    }

    private Outcome reconcile(String key) {
        if (key.startsWith(CRD_PREFIX)) {
            informers.reconcileCrd(key.substring(CRD_PREFIX.length()));
            return Outcome.DONE;
        }
        List<GatewayApiObject> objects = informers.objects();
        References refs = References.of(objects);
        if (informers.watchReferences(refs)) {
            queue.add(CONVERT); // once more: a newly referenced Secret may have come while it did not matter yet
        }
        GatewayApiInputs inputs = new GatewayApiInputs(objects, informers.namespaceLabels(), services,
                informers.referencedSecrets(refs), informers.referencedConfigMaps(refs), settings);
        ConversionResult result;
        try {
            result = conversion.apply(inputs);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "gateway api conversion of " + objects.size() + " objects failed, the config of "
                    + "the last one stays served: " + e);
            LOG.log(Level.DEBUG, "gateway api conversion failure", e);
            return Outcome.DONE;
        }
        // the grants first: a push started by the config events below must authorise the Secrets
        // this config names (and no longer those of the config it withdraws)
        referenceGrants = ReferenceGrants.of(objects);
        grantHandlers.forEach(handler -> handler.accept(referenceGrants));
        replaceConverted(result);
        report(result.problems());
        lastResult = result;
        gatewayServiceHosts = result.gatewayServices();
        convertedHandlers.forEach(Runnable::run);
        return Outcome.DONE;
    }

    /** Puts the converted objects (no event for an unchanged one) and removes the ones no longer converted. */
    private void replaceConverted(ConversionResult result) {
        Set<ConfigKey> keep = new HashSet<>();
        for (Config c : result.all()) {
            keep.add(converted.put(c).key());
        }
        for (String kind : SERVED_KINDS) {
            for (Config c : converted.list(kind, null)) {
                if (!keep.contains(c.key())) {
                    converted.remove(c.key());
                }
            }
        }
    }

    private void report(Map<ConfigKey, List<String>> now) {
        Map<ConfigKey, List<String>> before = problems;
        now.forEach((object, what) -> {
            if (!what.equals(before.get(object))) {
                LOG.log(Level.WARNING, "gateway api " + object + " not fully converted: " + String.join("; ", what));
            }
        });
        before.keySet().stream().filter(k -> !now.containsKey(k)).forEach(object ->
                LOG.log(Level.INFO, "gateway api " + object + " converted in full again"));
        problems = Map.copyOf(new HashMap<>(now));
    }

    /** What the last conversion could not convert, by object and reason, as the config errors list them. */
    public List<DocumentError> errors() {
        List<DocumentError> out = new ArrayList<>();
        problems.forEach((object, reasons) -> reasons.forEach(reason -> out.add(new DocumentError(SOURCE, 0, 0,
                object.kind(), object.namespace(), object.name(), "", reason))));
        out.sort((a, b) -> a.toString().compareTo(b.toString()));
        return out;
    }

    @Override
    public synchronized void close() {
        if (term != null) {
            term.close();
        }
        informers.close();
        converted.close();
    }
}
