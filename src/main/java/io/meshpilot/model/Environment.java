package io.meshpilot.model;

import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.config.kube.gateway.ReferenceGrants;
import io.meshpilot.features.TraceSampling;
import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import io.meshpilot.features.MetadataExchange;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The aggregate API every component reads (istiod's model.Environment): mesh config and
 * networks, domain suffix, cluster id, the aggregate service discovery and the endpoint
 * index. Mesh values are swapped atomically; readers always see one whole config.
 */
public final class Environment {
    private final AtomicReference<MeshConfig> mesh = new AtomicReference<>();
    private final AtomicReference<MeshNetworks> networks = new AtomicReference<>(MeshNetworks.getDefaultInstance());
    private final List<Runnable> meshHandlers = new CopyOnWriteArrayList<>();
    private final List<Runnable> networksHandlers = new CopyOnWriteArrayList<>();
    private final EndpointIndex endpointIndex = new EndpointIndex();
    private volatile ServiceDiscovery serviceDiscovery;
    private volatile JwksResolver jwksResolver = JwksResolver.NONE;
    private volatile AmbientIndexes ambientIndexes = AmbientIndexes.NONE;
    private volatile MetadataExchange metadataExchange = MetadataExchange.DEFAULTS;
    private volatile boolean ambientWaypoints;
    private volatile HboneSend hboneSend = HboneSend.OFF;
    private volatile PushContext.GatewayApiSettings gatewayApi = PushContext.GatewayApiSettings.DEFAULTS;
    private final String domainSuffix;
    private final String clusterId;
    private final double traceSampling;

    /**
     * @param domainSuffix --domain (cluster.local)
     * @param clusterId    --clusterID: the cluster this server's own registries belong to
     */
    public Environment(String domainSuffix, String clusterId) {
        this(domainSuffix, clusterId, TraceSampling.DEFAULT_PERCENT);
    }

    /**
     * @param domainSuffix  --domain (cluster.local)
     * @param clusterId     --clusterID: the cluster this server's own registries belong to
     * @param traceSampling PILOT_TRACE_SAMPLING: tracing's sampling percentage where the ProxyConfig sets none
     */
    public Environment(String domainSuffix, String clusterId, double traceSampling) {
        this.domainSuffix = domainSuffix;
        this.clusterId = clusterId;
        this.traceSampling = traceSampling;
    }

    public MeshConfig mesh() {
        return mesh.get();
    }

    public MeshNetworks networks() {
        return networks.get();
    }

    /** Every service's endpoints, by shard (updated incrementally by the registries). */
    public EndpointIndex endpointIndex() {
        return endpointIndex;
    }

    /** The aggregate of all service registries (set by the service-registries component). */
    public ServiceDiscovery serviceDiscovery() {
        return serviceDiscovery;
    }

    public void setServiceDiscovery(ServiceDiscovery discovery) {
        this.serviceDiscovery = discovery;
    }

    /**
     * Where pushes get the key sets RequestAuthentication rules name by jwksUri or issuer
     * (set by the discovery-server component; until then every such key set is the fail-closed one).
     */
    /** ztunnel's addresses: the ambient index with ambient mode on, else {@link AmbientIndexes#NONE}. */
    public AmbientIndexes ambientIndexes() {
        return ambientIndexes;
    }

    public void setAmbientIndexes(AmbientIndexes indexes) {
        this.ambientIndexes = indexes;
    }

    public JwksResolver jwksResolver() {
        return jwksResolver;
    }

    public void setJwksResolver(JwksResolver resolver) {
        this.jwksResolver = resolver;
    }

    /** istiod's metadata-exchange switches, which every PushContext carries to the listener builders. */
    public MetadataExchange metadataExchange() {
        return metadataExchange;
    }

    public void setMetadataExchange(MetadataExchange settings) {
        this.metadataExchange = settings;
    }

    /** How Gateway API config is served, which every PushContext carries. */
    public PushContext.GatewayApiSettings gatewayApi() {
        return gatewayApi;
    }

    /** PILOT_ENABLE_STRICT_GATEWAY_MERGING (set at start-up). */
    public void setStrictGatewayMerging(boolean strict) {
        gatewayApi = new PushContext.GatewayApiSettings(strict, gatewayApi.referenceGrants());
    }

    /** The ReferenceGrants in force, published by the Gateway API controller; the next push reads them. */
    public void setReferenceGrants(ReferenceGrants grants) {
        gatewayApi = new PushContext.GatewayApiSettings(gatewayApi.strictMerging(), grants);
    }

    /** PILOT_ENABLE_AMBIENT with PILOT_ENABLE_AMBIENT_WAYPOINTS: whether pushes bind services to waypoints. */
    public boolean ambientWaypoints() {
        return ambientWaypoints;
    }

    public void setAmbientWaypoints(boolean on) {
        this.ambientWaypoints = on;
    }

    /** Whether sidecars and gateways send HBONE (PILOT_ENABLE_SENDING_HBONE, PILOT_PREFER_SENDING_HBONE with ambient). */
    public HboneSend hboneSend() {
        return hboneSend;
    }

    public void setHboneSend(HboneSend send) {
        this.hboneSend = send;
    }

    public String domainSuffix() {
        return domainSuffix;
    }

    public String clusterId() {
        return clusterId;
    }

    /** PILOT_TRACE_SAMPLING, which every PushContext carries. */
    public double traceSampling() {
        return traceSampling;
    }

    /** Swaps the mesh config and runs the mesh handlers (a full push, once xDS exists). */
    public void setMesh(MeshConfig next) {
        MeshConfig prev = mesh.getAndSet(next);
        if (prev != null && !prev.equals(next)) {
            meshHandlers.forEach(Environment::runIsolated);
        }
    }

    public void setNetworks(MeshNetworks next) {
        MeshNetworks prev = networks.getAndSet(next);
        if (!prev.equals(next)) {
            networksHandlers.forEach(Environment::runIsolated);
        }
    }

    public void addMeshHandler(Runnable handler) {
        meshHandlers.add(handler);
    }

    public void addNetworksHandler(Runnable handler) {
        networksHandlers.add(handler);
    }

    private static void runIsolated(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            System.getLogger(Environment.class.getName()).log(System.Logger.Level.ERROR, "mesh handler failed", e);
        }
    }
}
