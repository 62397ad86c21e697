package io.meshpilot.inject.kubegateway;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ConfigMapList;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1DeploymentList;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.V1ServiceAccountList;
import io.kubernetes.client.openapi.models.V1ServiceList;
import io.kubernetes.client.openapi.models.VersionInfo;
import io.kubernetes.client.util.PatchUtils;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesListObject;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.kubernetes.client.util.generic.options.PatchOptions;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.config.kube.gateway.CrdVersions;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.config.kube.gateway.GatewayApiRevision;
import io.meshpilot.config.kube.gateway.convert.GatewayServiceBinding;
import io.meshpilot.config.kube.gateway.convert.ListenerConversion;
import io.meshpilot.config.kube.gateway.convert.ListenerSetConversion;
import io.meshpilot.inject.InjectionValues;
import io.meshpilot.inject.InjectorConfigMapWatcher;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeErrors;
import io.meshpilot.kube.ResourceListerWatcher;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.kube.controllers.SignallingInformer;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * istiod's Gateway API deployment controller (pilot/pkg/config/kube/gatewaycommon/deploymentcontroller.go):
 * for every Gateway of a class whose controller is {@code istio.io/gateway-controller}, the
 * ServiceAccount, Deployment and Service of the {@code kube-gateway} template
 * ({@link KubeGatewayTemplate}); with ambient waypoints on, for the waypoint class's
 * ({@code istio.io/mesh-controller}) those of the {@code waypoint} template ({@link WaypointTemplate});
 * with the class-defaults and parametersRef ConfigMaps laid over
 * ({@link Overlays}), server-side applied as {@code istio.io/gateway-controller} (forced) and
 * owned by the Gateway, so Kubernetes' garbage collector removes them with it. The Service's ports
 * are the Gateway's listeners' and those of the ListenerSets its {@code allowedListeners} admits.
 *
 * <p>Left alone as istiod leaves them: Gateways of other classes, revisions or unselected
 * namespaces; manual Gateways (more than one address, or a hostname address); Gateways a newer
 * controller version claims ({@code gateway.istio.io/controller-version}); objects that exist
 * without the {@code gateway.istio.io/managed} label. A Gateway's objects are rendered again when
 * the Gateway's spec, labels or annotations change, when its class or one of its ConfigMaps
 * changes, when its namespace's labels change or the namespace joins the discovery selection,
 * when one of its objects changes, when a ListenerSet naming it (or no longer naming it) changes,
 * and on {@link #settingsChanged}. Runs only on the leader of the Lease {@code istio-gateway-deployment-<revision>} ({@link #ELECTION}), and only
 * once the Gateway CRD exists (it may be installed after the server).
 */
public final class GatewayDeploymentController {
    private static final System.Logger LOG = System.getLogger(GatewayDeploymentController.class.getName());
    /** The Lease's name before the revision suffix (LeaderElection.perRevision). */
    public static final String ELECTION = "istio-gateway-deployment";
    /** The field manager of every apply (istiod's features.ManagedGatewayController). */
    public static final String FIELD_MANAGER = "istio.io/gateway-controller";
    static final String CLASS_DEFAULTS_LABEL = "gateway.istio.io/defaults-for-class";
    private static final String GROUP = "gateway.networking.k8s.io";
    private static final String GATEWAY_CRD = "gateways." + GROUP;
    private static final String LISTENER_SET_CRD = "listenersets." + GROUP;
    private static final String BY_PARENT = "parent";
    private static final String CRDS = "apiextensions.k8s.io/v1/customresourcedefinitions/";
    /** istiod's built-in classes without ambient; only {@code istio} has a template. */
    private static final Map<String, String> BUILTIN_CLASSES = Map.of("istio", FIELD_MANAGER,
            "istio-remote", "istio.io/unmanaged-gateway");
    private static final Backoff RETRY = Backoff.fixed(Duration.ofSeconds(1));
    /** The kinds the template may produce, with their API (group, version, plural). */
    private static final Map<String, List<String>> KINDS = Map.of(
            "ServiceAccount", List.of("", "v1", "serviceaccounts"),
            "Deployment", List.of("apps", "v1", "deployments"),
            "Service", List.of("", "v1", "services"),
            "HorizontalPodAutoscaler", List.of("autoscaling", "v2", "horizontalpodautoscalers"),
            "PodDisruptionBudget", List.of("policy", "v1", "poddisruptionbudgets"));

    private final KubeClient client;
    private final String systemNamespace;
    private final GatewayApiRevision revision;
    /** Every namespace (unfiltered), for the revision of a Gateway without its own label. */
    private final SharedIndexInformer<V1Namespace> namespaces;
    private final DeploymentInput.Settings settings;
    private final Supplier<InjectionValues> values;
    private final Supplier<MeshConfig> mesh;
    private final SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject> gateways;
    private final SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject> classes;
    /** The Gateway CRD: the Gateway and GatewayClass informers start once it is usable. */
    private final SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject> gatewayCrd;
    private final AtomicBoolean watchingGateways = new AtomicBoolean();
    /** ListenerSets, indexed by their parent Gateway's key: their listeners are ports of its Service. */
    private final SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject> listenerSets;
    private final SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject> listenerSetCrd;
    private final AtomicBoolean watchingListenerSets = new AtomicBoolean();
    private final SharedIndexInformer<V1ConfigMap> configMaps;
    private final SharedIndexInformer<V1Deployment> deployments;
    private final SharedIndexInformer<V1Service> services;
    private final SharedIndexInformer<V1ServiceAccount> serviceAccounts;
    private final CustomObjectsApi customObjects;
    private final ControllerQueue<String> queue = new ControllerQueue<>("gateway-deployment", RETRY, this::reconcile);
    /** {@code namespace/name} of the injector ConfigMap whose changes re-render every Gateway; null when not watched here. */
    private final String injectorConfigMap;

    /**
     * Registers the informers with the client (they start with its informers).
     *
     * @param systemNamespace where the class-defaults ConfigMaps live (istiod's namespace)
     * @param values          the injector ConfigMap's values, as they are now
     * @param mesh            the mesh config, as it is now (its default proxy config and trust domain)
     */
    public GatewayDeploymentController(KubeClient client, String systemNamespace, DeploymentInput.Settings settings,
                                       UnaryOperator<String> revisionTags, Supplier<InjectionValues> values,
                                       Supplier<MeshConfig> mesh) {
        this(client, systemNamespace, settings, revisionTags, values, mesh, null);
    }

    private GatewayDeploymentController(KubeClient client, String systemNamespace, DeploymentInput.Settings settings,
                                        UnaryOperator<String> revisionTags, Supplier<InjectionValues> values,
                                        Supplier<MeshConfig> mesh, String injectorConfigMap) {
        this.client = client;
        this.injectorConfigMap = injectorConfigMap;
        this.systemNamespace = systemNamespace;
        this.revision = new GatewayApiRevision(settings.revision(), revisionTags);
        this.namespaces = client.discoveryNamespaces().informer();
        this.settings = settings;
        this.values = values;
        this.mesh = mesh;
        this.customObjects = new CustomObjectsApi(client.apiClient());
        this.gateways = dynamicInformer("gateways");
        this.classes = dynamicInformer("gatewayclasses");
        this.configMaps = configMapInformer(client);
        this.deployments = coreInformer("Deployment", V1Deployment.class, V1DeploymentList.class, "apps", "deployments");
        this.services = coreInformer("Service", V1Service.class, V1ServiceList.class, "", "services");
        this.serviceAccounts = coreInformer("ServiceAccount", V1ServiceAccount.class, V1ServiceAccountList.class, "",
                "serviceaccounts");
        // status-only updates (attached routes, conditions) do not change what is deployed
        gateways.addEventHandler(changes((before, after) -> before.getMetadata().getGeneration() == null
                        || !Objects.equals(before.getMetadata().getGeneration(), after.getMetadata().getGeneration())
                        || !Objects.equals(before.getMetadata().getLabels(), after.getMetadata().getLabels())
                        || !Objects.equals(before.getMetadata().getAnnotations(), after.getMetadata().getAnnotations()),
                gw -> queue.add(key(gw.getMetadata()))));
        classes.addEventHandler(changes((a, b) -> true, c -> queueGateways(gw ->
                className(gw).equals(c.getMetadata().getName()))));
        configMaps.addEventHandler(changes((a, b) -> true, this::configMapChanged));
        // a namespace's istio.io/rev decides the revision of its unlabelled Gateways, its selection whether they count
        namespaces.addEventHandler(changes((before, after) -> !Objects.equals(before.getMetadata().getLabels(),
                after.getMetadata().getLabels()), ns -> queueGateways(gw -> ns.getMetadata().getName()
                .equals(gw.getMetadata().getNamespace()))));
        client.discoveryNamespaces().addHandler((selected, deselected) -> queueGateways(gw ->
                selected.contains(gw.getMetadata().getNamespace())));
        for (SharedIndexInformer<? extends KubernetesObject> owned : List.of(deployments, services, serviceAccounts)) {
            addOwnedHandler(owned);
        }
        this.gatewayCrd = crdInformer(GATEWAY_CRD);
        gatewayCrd.addEventHandler(changes((a, b) -> true, crd -> crdChanged(crd.getRaw(), GATEWAY_CRD, watchingGateways,
                () -> {
                    client.addInformer(GROUP + "/v1/gateways (deployment controller)", gateways);
                    client.addInformer(GROUP + "/v1/gatewayclasses (deployment controller)", classes);
                })));
        client.addInformer(CRDS + GATEWAY_CRD + " (deployment controller)", gatewayCrd);
        // as istiod's dc.listenerSets: a ListenerSet's change re-renders the Gateway it names, admitted or not;
        // unlike istiod, a changed parentRef also re-renders the former parent, whose Service loses the ports
        this.listenerSets = dynamicInformer("listenersets");
        listenerSets.addIndexers(Map.of(BY_PARENT, ls -> List.of(parentOf(ls))));
        listenerSets.addEventHandler(listenerSetChanges());
        this.listenerSetCrd = crdInformer(LISTENER_SET_CRD);
        listenerSetCrd.addEventHandler(changes((a, b) -> true, crd -> crdChanged(crd.getRaw(), LISTENER_SET_CRD,
                watchingListenerSets, () -> client.addInformer(GROUP + "/v1/listenersets (deployment controller)",
                        listenerSets))));
        client.addInformer(CRDS + LISTENER_SET_CRD + " (deployment controller)", listenerSetCrd);
    }

    private ResourceEventHandler<DynamicKubernetesObject> listenerSetChanges() {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(DynamicKubernetesObject listenerSet) {
                queue.add(parentOf(listenerSet));
            }

            @Override
            public void onUpdate(DynamicKubernetesObject before, DynamicKubernetesObject after) {
                queue.add(parentOf(before));
                queue.add(parentOf(after));
            }

            @Override
            public void onDelete(DynamicKubernetesObject listenerSet, boolean finalStateUnknown) {
                queue.add(parentOf(listenerSet));
            }
        };
    }

    private static String parentOf(DynamicKubernetesObject listenerSet) {
        return ListenerSetConversion.parentKey(GatewayApiObject.fromJson(listenerSet.getRaw()));
    }

    /**
     * The Gateways are watched from the moment their CRD can be read (istiod waits for it before
     * it runs this controller), so Gateway API CRDs installed after the server are honoured; so are
     * ListenerSets once theirs can (istiod's delayed informer). Once started they are not stopped:
     * as istiod's, the controller runs on if the CRD goes.
     */
    private void crdChanged(JsonObject crd, String crdName, AtomicBoolean watching, Runnable startInformers) {
        Optional<CrdVersions.Decision> decision = CrdVersions.decide(crd);
        if (decision.isEmpty() || !decision.get().watched()) {
            // the conversion's informers log why a CRD is refused; logging it here too would say it twice
            LOG.log(Level.DEBUG, () -> "gateway deployment controller: " + decision.map(CrdVersions.Decision::refusal)
                    .orElse("CRD " + crdName + " not usable") + ": waiting");
            return;
        }
        if (watching.compareAndSet(false, true)) {
            LOG.log(Level.INFO, "gateway deployment controller: CRD " + crdName + " installed: watching "
                    + decision.get().resource().kind() + "s");
            startInformers.run();
        }
    }

    /** An informer of the one CustomResourceDefinition {@code crdName}. */
    private SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject> crdInformer(String crdName) {
        var api = new DynamicKubernetesApi("apiextensions.k8s.io", "v1", "customresourcedefinitions", client.apiClient());
        String name = CRDS + crdName;
        return new SignallingInformer<>(DynamicKubernetesObject.class,
                ResourceListerWatcher.of(name, api, null, null, "metadata.name=" + crdName), new Cache<>(),
                client.watchErrorHandler(name));
    }

    private <T extends KubernetesObject> void addOwnedHandler(SharedIndexInformer<T> informer) {
        informer.addEventHandler(changes((a, b) -> true, this::ownedChanged));
    }

    private SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject> dynamicInformer(String plural) {
        String name = GROUP + "/v1/" + plural;
        var api = new DynamicKubernetesApi(GROUP, "v1", plural, client.apiClient());
        return new SignallingInformer<>(DynamicKubernetesObject.class, ResourceListerWatcher.all(name, api), new Cache<>(),
                client.watchErrorHandler(name));
    }

    /** The client's one ConfigMap informer (its factory holds one informer per type). */
    private static SharedIndexInformer<V1ConfigMap> configMapInformer(KubeClient client) {
        return coreInformer(client, "ConfigMap", V1ConfigMap.class, V1ConfigMapList.class, "", "configmaps");
    }

    private <T extends KubernetesObject, L extends KubernetesListObject> SharedIndexInformer<T> coreInformer(
            String name, Class<T> type, Class<L> listType, String group, String plural) {
        return coreInformer(client, name, type, listType, group, plural);
    }

    private static <T extends KubernetesObject, L extends KubernetesListObject> SharedIndexInformer<T> coreInformer(
            KubeClient client, String name, Class<T> type, Class<L> listType, String group, String plural) {
        var api = new GenericKubernetesApi<>(type, listType, group, "v1", plural, client.apiClient());
        return client.informers().sharedIndexInformerFor(ResourceListerWatcher.all(name, api), type, 0,
                client.watchErrorHandler(name));
    }

    /**
     * The controller as the server runs it (istiod's NewDeploymentController), or empty when the
     * API server cannot be asked its version; without the Gateway API CRDs it waits for them. The
     * API server's version and the injector ConfigMap's {@code values} (this
     * revision's {@code istio-sidecar-injector} in {@code systemNamespace}, read from the
     * controller's ConfigMap informer; a change re-renders every Gateway) are read here.
     */
    public static Optional<GatewayDeploymentController> forServer(KubeClient client, String systemNamespace,
                                                                  String revision, String clusterId,
                                                                  UnaryOperator<String> revisionTags,
                                                                  boolean manualDeployment, boolean ambientWaypoints,
                                                                  Supplier<MeshConfig> mesh) {
        int kubeVersion;
        try {
            kubeVersion = kubeVersion(new VersionApi(client.apiClient()).getCode().execute());
        } catch (ApiException e) {
            LOG.log(Level.WARNING, "gateway deployment controller: the API server's version cannot be read (HTTP "
                    + e.getCode() + " " + KubeErrors.oneLine(e) + "): not started");
            return Optional.empty();
        }
        String injector = systemNamespace + "/" + InjectorConfigMapWatcher.configMapName(revision);
        SharedIndexInformer<V1ConfigMap> configMaps = configMapInformer(client);
        Supplier<InjectionValues> values = () -> injectorValues(configMaps.getIndexer().getByKey(injector), injector);
        return Optional.of(new GatewayDeploymentController(client, systemNamespace,
                new DeploymentInput.Settings(clusterId, kubeVersion, revision, true, false, manualDeployment, ambientWaypoints),
                revisionTags, values, mesh,
                injector));
    }

    /** 1MM of the API server's version (128 for 1.28; "28+" of some providers read as 28). */
    private static int kubeVersion(VersionInfo v) {
        String minor = v.getMinor() == null ? "" : v.getMinor().replaceAll("[^0-9].*", "");
        String major = v.getMajor() == null ? "" : v.getMajor().replaceAll("[^0-9].*", "");
        return major.isEmpty() || minor.isEmpty() ? 0 : Integer.parseInt(major) * 100 + Integer.parseInt(minor);
    }

    /** The injector ConfigMap's values over the chart defaults; the defaults alone when it is missing or its values do not parse. */
    private static InjectionValues injectorValues(V1ConfigMap cm, String name) {
        String json = cm == null || cm.getData() == null ? null : cm.getData().get(InjectorConfigMapWatcher.VALUES_KEY);
        try {
            return InjectionValues.parse(json);
        } catch (IllegalArgumentException e) {
            LOG.log(Level.WARNING, "gateway deployment controller: injector ConfigMap " + name + ": " + e.getMessage()
                    + ": rendering with the chart's defaults");
            return InjectionValues.defaults();
        }
    }

    /**
     * Starts reconciling (the leader's term): every Gateway once the informers have synced, then
     * as they change. Closing the returned term stops it.
     */
    public AutoCloseable lead() {
        CompletableFuture<?> synced = CompletableFuture.allOf(gateways.synced(), classes.synced(),
                SignallingInformer.syncedOf(configMaps), SignallingInformer.syncedOf(deployments),
                SignallingInformer.syncedOf(services), SignallingInformer.syncedOf(serviceAccounts),
                SignallingInformer.syncedOf(namespaces));
        return queue.start(synced, () -> queueGateways(gw -> true));
    }

    /** The mesh config or the injector settings changed: every Gateway is rendered again. */
    public void settingsChanged() {
        queueGateways(gw -> true);
    }

    /** Every Gateway's objects reconciled at least once since {@link #lead}. */
    public boolean hasSynced() {
        return queue.hasSynced();
    }

    private void queueGateways(Predicate<DynamicKubernetesObject> which) {
        for (DynamicKubernetesObject gw : gateways.getIndexer().list()) {
            if (which.test(gw)) {
                queue.add(key(gw.getMetadata()));
            }
        }
    }

    /**
     * The listeners of the ListenerSets naming the Gateway {@code key} that its
     * {@code allowedListeners} admits (istiod's configureIstioGateway), in ListenerSet key order so
     * the Service's ports keep their order.
     */
    private List<JsonObject> listenerSetListeners(String key, JsonObject gateway) {
        JsonObject spec = DeploymentInput.object(gateway, "spec");
        String gatewayNamespace = DeploymentInput.string(DeploymentInput.object(gateway, "metadata"), "namespace");
        List<DynamicKubernetesObject> sets = new ArrayList<>(listenerSets.getIndexer().byIndex(BY_PARENT, key));
        sets.sort(Comparator.comparing(ls -> key(ls.getMetadata())));
        List<JsonObject> listeners = new ArrayList<>();
        for (DynamicKubernetesObject set : sets) {
            String namespace = set.getMetadata().getNamespace();
            if (ListenerSetConversion.admits(spec, gatewayNamespace, namespace, selector -> namespaceSelected(selector, namespace))
                    && DeploymentInput.object(set.getRaw(), "spec").get("listeners") instanceof JsonArray entries) {
                entries.forEach(l -> listeners.add(l.isJsonObject() ? l.getAsJsonObject() : new JsonObject()));
            }
        }
        return listeners;
    }

    /** istiod's lookup: a namespace this controller does not know is not selected. */
    private boolean namespaceSelected(JsonObject selector, String namespace) {
        V1Namespace ns = namespaces.getIndexer().getByKey(namespace);
        return ns != null && ListenerConversion.selects(selector, namespace,
                ns.getMetadata().getLabels() == null ? Map.of() : ns.getMetadata().getLabels());
    }

    /** A Gateway's parametersRef, a class-defaults ConfigMap in the system namespace, or the injector's, changed. */
    private void configMapChanged(V1ConfigMap cm) {
        String namespace = cm.getMetadata().getNamespace();
        String name = cm.getMetadata().getName();
        if ((namespace + "/" + name).equals(injectorConfigMap)) {
            settingsChanged();
            return;
        }
        Map<String, String> labels = cm.getMetadata().getLabels() == null ? Map.of() : cm.getMetadata().getLabels();
        String defaultsFor = systemNamespace.equals(namespace) ? labels.get(CLASS_DEFAULTS_LABEL) : null;
        queueGateways(gw -> defaultsFor != null && defaultsFor.equals(className(gw))
                || namespace.equals(gw.getMetadata().getNamespace()) && name.equals(parametersRefName(gw.getRaw())));
    }

    /** One of a Gateway's objects changed (someone edited or deleted it): its Gateway is reconciled. */
    private void ownedChanged(KubernetesObject o) {
        V1ObjectMeta meta = o.getMetadata();
        if (meta.getOwnerReferences() == null) {
            return;
        }
        for (V1OwnerReference owner : meta.getOwnerReferences()) {
            if ("Gateway".equals(owner.getKind()) && owner.getApiVersion() != null
                    && owner.getApiVersion().startsWith(GROUP + "/")) {
                queue.add(meta.getNamespace() + "/" + owner.getName());
            }
        }
    }

    private Outcome reconcile(String key) {
        DynamicKubernetesObject gw = gateways.getIndexer().getByKey(key);
        if (gw == null) {
            return Outcome.DONE; // deleted: the garbage collector removes what it owned
        }
        JsonObject raw = gw.getRaw();
        String controller = controllerOf(className(gw));
        Optional<DeploymentClass> deploymentClass = deploymentClass(controller);
        if (deploymentClass.isEmpty()) {
            LOG.log(Level.DEBUG, () -> "gateway " + key + ": class " + className(gw) + " is not istiod's (" + controller + ")");
            return Outcome.DONE;
        }
        if (!client.discoveryNamespaces().selects(gw.getMetadata().getNamespace()) || !isMine(gw.getMetadata())) {
            return Outcome.DONE;
        }
        // the conversion's rule, so that what it expects to be deployed is
        if (!GatewayServiceBinding.isManaged(DeploymentInput.object(raw, "spec"), settings.manualDeployment())) {
            LOG.log(Level.DEBUG, () -> "gateway " + key + ": manual deployment (spec.addresses), nothing deployed");
            return Outcome.DONE;
        }
        Map<String, String> annotations = gw.getMetadata().getAnnotations() == null ? Map.of()
                : gw.getMetadata().getAnnotations();
        VersionClaim claim = VersionClaim.of(annotations.get(KubeGatewayTemplate.CONTROLLER_VERSION_ANNOTATION));
        if (!claim.manage()) {
            LOG.log(Level.DEBUG, () -> "gateway " + key + ": managed by controller version "
                    + annotations.get(KubeGatewayTemplate.CONTROLLER_VERSION_ANNOTATION));
            return Outcome.DONE;
        }
        InjectionValues injectionValues = values.get();
        DeploymentInput input = DeploymentInput.of(raw, listenerSetListeners(key, raw), settings, deploymentClass.get(),
                injectionValues.string("global.network"));
        List<JsonObject> objects;
        try {
            objects = KubeGatewayTemplate.objects(input, injectionValues, mesh.get(), overlays(raw, input));
        } catch (IllegalArgumentException e) {
            // not retried: only a change of the Gateway or its ConfigMaps can fix it; what was deployed stays
            LOG.log(Level.ERROR, "gateway " + key + ": not deployed: " + e.getMessage());
            return Outcome.DONE;
        }
        try {
            if (claim.takeOver()) {
                claimVersion(gw);
            }
            List<String> applied = new ArrayList<>();
            for (JsonObject o : objects) {
                if (apply(o, input)) {
                    applied.add(DeploymentInput.string(o, "kind") + " " + DeploymentInput.object(o, "metadata")
                            .get("name").getAsString());
                }
            }
            LOG.log(Level.INFO, "gateway " + key + " deployed: applied " + applied);
            return Outcome.DONE;
        } catch (IllegalArgumentException e) {
            LOG.log(Level.ERROR, "gateway " + key + ": not deployed: " + e.getMessage());
            return Outcome.DONE;
        } catch (ApiException e) {
            if (Thread.currentThread().isInterrupted()) {
                return Outcome.DONE;
            }
            LOG.log(e.getCode() == 409 ? Level.DEBUG : Level.WARNING, "gateway " + key + ": apply failed (retrying): HTTP "
                    + e.getCode() + " " + KubeErrors.oneLine(e));
            return Outcome.RETRY;
        }
    }

    /** The ConfigMap data laid over the rendering: the class defaults (the oldest such ConfigMap), then the parametersRef's. */
    private List<Map<String, String>> overlays(JsonObject gateway, DeploymentInput input) {
        List<Map<String, String>> out = new ArrayList<>();
        configMaps.getIndexer().list().stream()
                .filter(cm -> systemNamespace.equals(cm.getMetadata().getNamespace()) && cm.getMetadata().getLabels() != null
                        && input.gatewayClass().equals(cm.getMetadata().getLabels().get(CLASS_DEFAULTS_LABEL)))
                .min(Comparator.comparing((V1ConfigMap cm) -> cm.getMetadata().getCreationTimestamp() == null ? Instant.MIN
                        : cm.getMetadata().getCreationTimestamp().toInstant()).thenComparing(cm -> cm.getMetadata().getName()))
                .ifPresent(cm -> out.add(data(cm)));
        JsonObject ref = DeploymentInput.object(DeploymentInput.object(DeploymentInput.object(gateway, "spec"),
                "infrastructure"), "parametersRef");
        if (!ref.isEmpty()) {
            String group = DeploymentInput.string(ref, "group");
            String kind = DeploymentInput.string(ref, "kind");
            if (!group.isEmpty() || !kind.equals("ConfigMap")) {
                throw new IllegalArgumentException("invalid parameters: unknown infrastructure parameters type "
                        + group + "/" + kind);
            }
            String name = DeploymentInput.string(ref, "name");
            V1ConfigMap cm = configMaps.getIndexer().getByKey(input.namespace() + "/" + name);
            if (cm == null) {
                throw new IllegalArgumentException("parametersRef targeting configmap \"" + input.namespace() + "/" + name
                        + "\", but configmap does not exist");
            }
            out.add(data(cm));
        }
        return out;
    }

    private static Map<String, String> data(V1ConfigMap cm) {
        return cm.getData() == null ? Map.of() : cm.getData();
    }

    /**
     * Server-side applies one rendered object, unless it exists without the managed label
     * (istiod's canManage). Returns whether it was applied.
     *
     * @throws IllegalArgumentException the object is not one a gateway deployment consists of (istiod's safeguards)
     */
    private boolean apply(JsonObject object, DeploymentInput input) throws ApiException {
        String kind = DeploymentInput.string(object, "kind");
        JsonObject meta = DeploymentInput.object(object, "metadata");
        String name = DeploymentInput.string(meta, "name");
        List<String> api = KINDS.get(kind);
        // the template is istiod's, but an overlay could have been anything: write only what a gateway needs
        if (api == null || !input.namespace().equals(DeploymentInput.string(meta, "namespace"))
                || !(name.equals(input.deploymentName()) || name.equals(input.serviceAccount())
                || name.startsWith(input.name()))) {
            throw new IllegalArgumentException("rendered " + kind + " " + DeploymentInput.string(meta, "namespace") + "/" + name
                    + " is not one of gateway " + input.namespace() + "/" + input.name() + "'s objects");
        }
        var dynamic = new DynamicKubernetesApi(api.get(0), api.get(1), api.get(2), client.apiClient());
        JsonObject existing = existing(kind, dynamic, input.namespace(), name);
        if (existing != null) {
            if (!DeploymentInput.object(DeploymentInput.object(existing, "metadata"), "labels")
                    .has(KubeGatewayTemplate.MANAGED_LABEL)) {
                LOG.log(Level.INFO, "gateway " + input.namespace() + "/" + input.name() + ": " + kind + " " + name
                        + " exists and is not managed by a gateway controller (no label "
                        + KubeGatewayTemplate.MANAGED_LABEL + "): left alone");
                return false;
            }
            // a precondition: what canManage saw is what is overwritten
            meta.addProperty("resourceVersion", DeploymentInput.string(DeploymentInput.object(existing, "metadata"),
                    "resourceVersion"));
            if (kind.equals("Deployment")) {
                keepLegacySelector(object, existing);
            }
        }
        KubernetesApiResponse<DynamicKubernetesObject> r = dynamic.patch(input.namespace(), name,
                V1Patch.PATCH_FORMAT_APPLY_YAML, new V1Patch(object.toString()),
                new PatchOptions().fieldManager(FIELD_MANAGER).force(true));
        r.throwsApiException();
        return true;
    }

    /**
     * A Deployment made before istiod 1.24 selects on {@code istio.io/gateway-name}: a
     * Deployment's selector cannot change, so it is kept, with that label on the pods.
     */
    static void keepLegacySelector(JsonObject object, JsonObject existing) {
        JsonObject oldSelector = DeploymentInput.object(DeploymentInput.object(existing, "spec"), "selector");
        if (DeploymentInput.string(DeploymentInput.object(oldSelector, "matchLabels"), "istio.io/gateway-name").isEmpty()) {
            return;
        }
        JsonObject spec = DeploymentInput.object(object, "spec");
        spec.add("selector", oldSelector.deepCopy());
        JsonObject oldPodLabels = DeploymentInput.object(DeploymentInput.object(DeploymentInput.object(
                DeploymentInput.object(existing, "spec"), "template"), "metadata"), "labels");
        DeploymentInput.object(DeploymentInput.object(DeploymentInput.object(spec, "template"), "metadata"), "labels")
                .addProperty("istio.io/gateway-name", DeploymentInput.string(oldPodLabels, "istio.io/gateway-name"));
    }

    /** The object as the informers hold it (a GET for the kinds not watched); null when there is none. */
    private JsonObject existing(String kind, DynamicKubernetesApi api, String namespace, String name) throws ApiException {
        String key = namespace + "/" + name;
        Function<KubernetesObject, JsonObject> json = o -> client.apiClient().getJSON().getGson().toJsonTree(o)
                .getAsJsonObject();
        switch (kind) {
            case "Deployment" -> {
                V1Deployment d = deployments.getIndexer().getByKey(key);
                return d == null ? null : json.apply(d);
            }
            case "Service" -> {
                V1Service s = services.getIndexer().getByKey(key);
                return s == null ? null : json.apply(s);
            }
            case "ServiceAccount" -> {
                V1ServiceAccount s = serviceAccounts.getIndexer().getByKey(key);
                return s == null ? null : json.apply(s);
            }
            default -> {
                KubernetesApiResponse<DynamicKubernetesObject> r = api.get(namespace, name);
                if (r.getHttpStatusCode() == 404) {
                    return null;
                }
                return r.throwsApiException().getObject().getRaw();
            }
        }
    }

    /**
     * Writes {@code gateway.istio.io/controller-version: "5"} onto the Gateway by a server-side
     * apply on its status subresource, as istiod does (so the status permission suffices).
     */
    private void claimVersion(DynamicKubernetesObject gw) throws ApiException {
        JsonObject patch = KubeGatewayTemplate.controllerVersionClaim();
        String namespace = gw.getMetadata().getNamespace();
        String name = gw.getMetadata().getName();
        PatchUtils.patch(Object.class, () -> customObjects.patchNamespacedCustomObjectStatus(GROUP, "v1", namespace,
                        "gateways", name, new V1Patch(patch.toString())).fieldManager(FIELD_MANAGER).force(true).buildCall(null),
                V1Patch.PATCH_FORMAT_APPLY_YAML, client.apiClient());
    }

    /** Whether this controller version manages a Gateway, and whether it must write its version first (istiod's ManagedGatewayControllerVersion). */
    record VersionClaim(boolean manage, boolean takeOver) {
        static VersionClaim of(String annotation) {
            if (annotation == null) {
                return new VersionClaim(true, true);
            }
            int version;
            try {
                version = Integer.parseInt(annotation);
            } catch (NumberFormatException e) {
                return new VersionClaim(false, false); // a scheme from a later controller
            }
            if (version > KubeGatewayTemplate.CONTROLLER_VERSION) {
                return new VersionClaim(false, false);
            }
            // at our version the annotation is not written again: that could race a newer controller
            return new VersionClaim(true, version < KubeGatewayTemplate.CONTROLLER_VERSION);
        }
    }

    /** istiod's tag watcher IsMine: the Gateway's {@code istio.io/rev}, else its namespace's, tags resolved. */
    private boolean isMine(V1ObjectMeta meta) {
        V1Namespace ns = namespaces.getIndexer().getByKey(meta.getNamespace());
        Map<String, String> namespaceLabels = ns == null || ns.getMetadata().getLabels() == null ? Map.of()
                : ns.getMetadata().getLabels();
        return revision.isMine(meta.getLabels() == null ? Map.of() : meta.getLabels(), namespaceLabels);
    }

    private String controllerOf(String className) {
        DynamicKubernetesObject c = classes.getIndexer().getByKey(className);
        if (c != null) {
            return DeploymentInput.string(DeploymentInput.object(c.getRaw(), "spec"), "controllerName");
        }
        if (settings.ambientWaypoints() && className.equals(GatewayApiKinds.WAYPOINT_CLASS)) {
            return GatewayApiKinds.MESH_CONTROLLER;
        }
        return BUILTIN_CLASSES.getOrDefault(className, "");
    }

    /** What a controller's Gateways get deployed from (istiod's ClassInfos with a template); empty for none. */
    private Optional<DeploymentClass> deploymentClass(String controller) {
        if (controller.equals(FIELD_MANAGER)) {
            return Optional.of(DeploymentClass.KUBE_GATEWAY);
        }
        if (settings.ambientWaypoints() && controller.equals(DeploymentClass.WAYPOINT.controller())) {
            return Optional.of(DeploymentClass.WAYPOINT);
        }
        return Optional.empty();
    }

    private static String className(DynamicKubernetesObject gw) {
        return DeploymentInput.string(DeploymentInput.object(gw.getRaw(), "spec"), "gatewayClassName");
    }

    private static String parametersRefName(JsonObject gateway) {
        JsonObject ref = DeploymentInput.object(DeploymentInput.object(DeploymentInput.object(gateway, "spec"),
                "infrastructure"), "parametersRef");
        return DeploymentInput.string(ref, "name");
    }

    private static String key(V1ObjectMeta meta) {
        return meta.getNamespace() + "/" + meta.getName();
    }

    private static <T extends KubernetesObject> ResourceEventHandler<T> changes(BiPredicate<T, T> updateMatters,
                                                                               Consumer<T> changed) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T obj) {
                changed.accept(obj);
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                if (updateMatters.test(oldObj, newObj)) {
                    changed.accept(newObj);
                }
            }

            @Override
            public void onDelete(T obj, boolean finalStateUnknown) {
                changed.accept(obj);
            }
        };
    }
}
