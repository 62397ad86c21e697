package io.meshpilot.networking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.store.ConfigStore;
import io.meshpilot.config.store.MemoryConfigStore;
import io.meshpilot.features.MetadataExchange;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.JwksResolver;
import io.meshpilot.features.TraceSampling;
import io.meshpilot.model.GatewayNames;
import io.meshpilot.model.HboneSend;
import io.meshpilot.model.PushContext;
import io.meshpilot.registry.RecordingUpdates;
import io.meshpilot.registry.serviceentry.ServiceEntryRegistry;
import java.io.FileNotFoundException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real validating config store with the ServiceEntry registry on it, as the server wires
 * them, for tests that build a PushContext from Istio YAML. Close it after the test.
 */
public final class MeshFixture implements AutoCloseable {
    public final MemoryConfigStore store;
    public final RecordingUpdates updates;
    public final ServiceEntryRegistry registry;
    private final ConfigParser parser = new ConfigParser(Schemas.PILOT);

    public MeshFixture() {
        this(true);
    }

    /**
     * A fixture whose store takes config unvalidated, as the Gateway API conversion's store serves
     * it ({@link #applyGenerated}); {@link #apply} still validates through the parser.
     */
    public static MeshFixture forGeneratedConfig() {
        return new MeshFixture(false);
    }

    private MeshFixture(boolean validatingStore) {
        store = new MemoryConfigStore("test", Schemas.PILOT.all(), validatingStore);
        updates = new RecordingUpdates();
        registry = new ServiceEntryRegistry(store, updates, () -> "cluster.local", "Kubernetes");
        for (String kind : List.of("ServiceEntry", "WorkloadEntry", "WorkloadGroup")) {
            store.registerEventHandler(kind, registry::onConfigEvent);
        }
        store.run();
    }

    /** A fixture holding the test resource {@code path} ({@code /meshes/...}). */
    public static MeshFixture of(String path) throws Exception {
        MeshFixture f = new MeshFixture();
        f.applyResource(path);
        return f;
    }

    /** Applies Istio YAML (one or more documents); fails the test on any validation error. */
    public MeshFixture apply(String yaml) throws Exception {
        ConfigParser.Result r = parser.parse("test.yaml", yaml);
        assertEquals(List.of(), r.errors());
        for (Config c : r.configs()) {
            store.create(c);
        }
        assertTrue(store.awaitEventsDelivered(10, TimeUnit.SECONDS));
        return this;
    }

    /**
     * Applies Istio config as istiod's Gateway API conversion generates it (names that are not
     * DNS-1123, internal annotations), unvalidated, as the conversion's store serves it.
     */
    public MeshFixture applyGenerated(String yaml) throws Exception {
        for (Config c : GeneratedIstioConfig.parse(yaml)) {
            store.create(c);
        }
        assertTrue(store.awaitEventsDelivered(10, TimeUnit.SECONDS));
        return this;
    }

    /** A push with the server's Gateway API settings {@code gatewayApi} (strict merging, ReferenceGrants). */
    public PushContext push(PushContext.GatewayApiSettings gatewayApi) {
        return push(store, 1, gatewayApi);
    }

    /**
     * A push of version {@code version} that reads its config from {@code configs} (e.g. the
     * aggregate of this store and a converted one, as the server reads them) and its services
     * from this fixture's registry.
     */
    public PushContext push(ConfigStore configs, long version, PushContext.GatewayApiSettings gatewayApi) {
        return PushContext.build(registry, configs, updates.index, new MeshConfigLoader().defaults(),
                MeshNetworks.getDefaultInstance(), "cluster.local", version, JwksResolver.NONE,
                new PushContext.ServerSettings(GatewayNames.NONE, MetadataExchange.DEFAULTS, TraceSampling.DEFAULT_PERCENT,
                        gatewayApi));
    }

    /** A push with ambient waypoints on (PILOT_ENABLE_AMBIENT): services are bound to the waypoints they name. */
    public PushContext pushWithWaypoints() {
        return PushContext.build(registry, store, updates.index, new MeshConfigLoader().defaults(),
                MeshNetworks.getDefaultInstance(), "cluster.local", 1, JwksResolver.NONE,
                new PushContext.ServerSettings(GatewayNames.NONE, MetadataExchange.DEFAULTS, TraceSampling.DEFAULT_PERCENT,
                        PushContext.GatewayApiSettings.DEFAULTS, true));
    }

    /** A push while sidecars and gateways send HBONE (PILOT_ENABLE_AMBIENT's default PILOT_ENABLE_SENDING_HBONE). */
    public PushContext pushSendingHbone() {
        return PushContext.build(registry, store, updates.index, new MeshConfigLoader().defaults(),
                MeshNetworks.getDefaultInstance(), "cluster.local", 1, JwksResolver.NONE,
                new PushContext.ServerSettings(GatewayNames.NONE, MetadataExchange.DEFAULTS, TraceSampling.DEFAULT_PERCENT,
                        PushContext.GatewayApiSettings.DEFAULTS, false, new HboneSend(true, false, true)));
    }

    /** Applies a YAML file from the test resources ({@code /meshes/...}). */
    public MeshFixture applyResource(String path) throws Exception {
        try (var in = MeshFixture.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new FileNotFoundException("test resource " + path);
            }
            return apply(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    public PushContext push() {
        return push(new MeshConfigLoader().defaults());
    }

    public PushContext push(MeshConfig mesh) {
        return PushContext.build(registry, store, updates.index, mesh, "cluster.local", 1);
    }

    /** A push with the server's metadata-exchange switches {@code mx} (PILOT_ENABLE_METADATA_EXCHANGE, ...). */
    public PushContext push(MeshConfig mesh, MetadataExchange mx) {
        return PushContext.build(registry, store, updates.index, mesh, MeshNetworks.getDefaultInstance(),
                "cluster.local", 1, JwksResolver.NONE, new PushContext.ServerSettings(GatewayNames.NONE, mx,
                TraceSampling.DEFAULT_PERCENT));
    }

    /** A push whose RequestAuthentication key sets come from {@code jwks}, as the discovery server's do. */
    public PushContext push(JwksResolver jwks) {
        return PushContext.build(registry, store, updates.index, new MeshConfigLoader().defaults(), "cluster.local", 1,
                jwks);
    }

    @Override
    public void close() {
        store.close();
    }
}
