package io.meshpilot.networking.wasm;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonParser;
import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.StringValue;
import com.google.protobuf.Struct;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.core.v3.AsyncDataSource;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.config.core.v3.HttpUri;
import io.envoyproxy.envoy.config.core.v3.RemoteDataSource;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.extensions.filters.http.wasm.v3.Wasm;
import io.envoyproxy.envoy.extensions.wasm.v3.EnvironmentVariables;
import io.envoyproxy.envoy.extensions.wasm.v3.FailurePolicy;
import io.envoyproxy.envoy.extensions.wasm.v3.PluginConfig;
import io.envoyproxy.envoy.extensions.wasm.v3.VmConfig;
import io.meshpilot.api.extensions.v1alpha1.EnvValueSource;
import io.meshpilot.api.extensions.v1alpha1.EnvVar;
import io.meshpilot.api.extensions.v1alpha1.PluginType;
import io.meshpilot.api.extensions.v1alpha1.PullPolicy;
import io.meshpilot.api.extensions.v1alpha1.WasmPlugin;
import io.meshpilot.config.Config;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.telemetry.ListenerClass;
import io.meshpilot.networking.telemetry.PolicyAttachment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * WasmPlugins as istiod serves them (pilot/pkg/model/extensions.go, networking/core/extension):
 * which plugins apply to a proxy's listener, and each plugin's ECDS resource, a
 * {@link TypedExtensionConfig} named {@code extensions.istio.io/wasmplugin/<ns>.<name>} holding
 * an {@code envoy.extensions.filters.http.wasm.v3.Wasm}. Plugins with an {@code oci://} module
 * (the default scheme) need the istio-agent to pull them and are left out (the push status says
 * so).
 */
public final class WasmPlugins {
    public static final String RESOURCE_PREFIX = "extensions.istio.io/wasmplugin/";
    static final String RUNTIME = "envoy.wasm.runtime.v8";
    static final String SECRET_ENV = "ISTIO_META_WASM_IMAGE_PULL_SECRET";
    static final String POLICY_ENV = "ISTIO_META_WASM_IMAGE_PULL_POLICY";
    static final String RESOURCE_VERSION_ENV = "ISTIO_META_WASM_PLUGIN_RESOURCE_VERSION";

    private WasmPlugins() {
    }

    /** The ECDS name of a plugin. */
    public static String resourceName(Config c) {
        return RESOURCE_PREFIX + c.namespace() + "." + c.name();
    }

    /** Whether MeshPilot puts the plugin into Envoy's listeners and serves it over ECDS. */
    public static boolean served(WasmPlugin w) {
        return !isOci(w.getUrl()) && printable(w);
    }

    /** istiod's type rule: NETWORK plugins are network filters, HTTP and unspecified ones HTTP filters. */
    public static boolean isNetwork(WasmPlugin w) {
        return w.getType() == PluginType.NETWORK;
    }

    /** istiod discards a plugin whose pluginConfig cannot be written as JSON (a NaN or infinite number). */
    private static boolean printable(WasmPlugin w) {
        try {
            compactJson(w.getPluginConfig());
            return true;
        } catch (InvalidProtocolBufferException | IllegalArgumentException e) {
            return false;
        }
    }

    /** istiod's scheme rule: a URL without a scheme is an OCI image reference. */
    public static boolean isOci(String url) {
        int colon = url.indexOf("://");
        return colon < 0 || url.substring(0, colon).equalsIgnoreCase("oci");
    }

    /**
     * The plugins that may apply to the proxy (istiod's WasmPluginsByListenerInfo without the
     * listener part): those of the proxy's namespace and of the root namespace whose selector or
     * targetRefs attach them, oldest first.
     */
    public static List<Config> forProxy(Proxy proxy, PushContext push) {
        List<Config> out = new ArrayList<>();
        for (Config c : push.wasmPlugins()) {
            if (!c.namespace().equals(proxy.namespace()) && !c.namespace().equals(push.rootNamespace())) {
                continue;
            }
            WasmPlugin w = (WasmPlugin) c.spec();
            if (served(w) && PolicyAttachment.attaches(w.getSelector(),
                    PolicyAttachment.refs(w.getTargetRefsList(), w.getTargetRef(), w.hasTargetRef()), c.namespace(), proxy)) {
                out.add(c);
            }
        }
        return out;
    }

    /** Whether some plugin selects workloads by labels or targetRefs (two proxies of a scope may differ). */
    public static boolean dependsOnWorkload(PushContext push) {
        return push.wasmPlugins().stream().map(c -> (WasmPlugin) c.spec())
                .anyMatch(w -> w.getSelector().getMatchLabelsCount() > 0 || w.hasTargetRef() || w.getTargetRefsCount() > 0);
    }

    /** istiod's matchTrafficSelectors: no selector matches all; else one selector's mode and ports must match. */
    static boolean matches(WasmPlugin w, ListenerClass cls, int port) {
        if (w.getMatchCount() == 0) {
            return true;
        }
        for (WasmPlugin.TrafficSelector ts : w.getMatchList()) {
            boolean mode = switch (ts.getMode()) {
                case UNDEFINED, CLIENT_AND_SERVER -> true;
                default -> ts.getMode() == cls.typeMode();
            };
            boolean ports = ts.getPortsCount() == 0
                    || ts.getPortsList().stream().anyMatch(p -> p.getNumber() != 0 && p.getNumber() == port);
            if (mode && ports) {
                return true;
            }
        }
        return false;
    }

    /**
     * The ECDS resource {@code name} for the proxy, or empty when no served plugin of the proxy's
     * namespace or the root namespace has that name (istiod's WasmPluginsByName).
     */
    public static Optional<TypedExtensionConfig> extensionConfig(String name, Proxy proxy, PushContext push) {
        if (!name.startsWith(RESOURCE_PREFIX)) {
            return Optional.empty();
        }
        for (Config c : push.wasmPlugins()) {
            if ((c.namespace().equals(proxy.namespace()) || c.namespace().equals(push.rootNamespace()))
                    && resourceName(c).equals(name) && served((WasmPlugin) c.spec())) {
                return Optional.of(extensionConfig(c));
            }
        }
        return Optional.empty();
    }

    /**
     * istiod's InsertedExtensionConfigurations for one plugin: an HTTP Wasm filter, or a network
     * one for NETWORK plugins.
     */
    public static TypedExtensionConfig extensionConfig(Config c) {
        Any typed = isNetwork((WasmPlugin) c.spec())
                ? Any.pack(io.envoyproxy.envoy.extensions.filters.network.wasm.v3.Wasm.newBuilder()
                        .setConfig(pluginConfig(c)).build())
                : Any.pack(Wasm.newBuilder().setConfig(pluginConfig(c)).build());
        return TypedExtensionConfig.newBuilder().setName(resourceName(c)).setTypedConfig(typed).build();
    }

    /** istiod's buildPluginConfig. */
    static PluginConfig pluginConfig(Config c) {
        WasmPlugin w = (WasmPlugin) c.spec();
        Any configuration = Any.getDefaultInstance();
        if (w.hasPluginConfig() && w.getPluginConfig().getFieldsCount() > 0) {
            try {
                configuration = Any.pack(StringValue.of(compactJson(w.getPluginConfig())));
            } catch (InvalidProtocolBufferException e) {
                throw new IllegalArgumentException("WasmPlugin " + c.namespace() + "/" + c.name()
                        + ": pluginConfig is not JSON: " + e.getMessage(), e);
            }
        }
        VmConfig.Builder vm = VmConfig.newBuilder().setRuntime(RUNTIME).setCode(dataSource(w));
        EnvironmentVariables.Builder env = EnvironmentVariables.newBuilder();
        if (w.getImagePullPolicy() != PullPolicy.UNSPECIFIED_POLICY) {
            env.putKeyValues(POLICY_ENV, w.getImagePullPolicy().name());
        }
        env.putKeyValues(RESOURCE_VERSION_ENV, c.resourceVersion());
        List<String> hostKeys = new ArrayList<>();
        for (EnvVar e : w.getVmConfig().getEnvList()) {
            if (e.getValueFrom() == EnvValueSource.HOST) {
                hostKeys.add(e.getName());
            } else {
                env.putKeyValues(e.getName(), e.getValue());
            }
        }
        env.addAllHostEnvKeys(hostKeys);
        vm.setEnvironmentVariables(env);
        PluginConfig.Builder pc = PluginConfig.newBuilder().setName(c.namespace() + "." + c.name())
                .setRootId(w.getPluginName()).setConfiguration(configuration).setVmConfig(vm);
        switch (w.getFailStrategy()) {
            case FAIL_OPEN -> pc.setFailurePolicy(FailurePolicy.FAIL_OPEN);
            case FAIL_CLOSE -> pc.setFailurePolicy(FailurePolicy.FAIL_CLOSED);
            case FAIL_RELOAD -> pc.setFailurePolicy(FailurePolicy.FAIL_RELOAD);
            default -> { }
        }
        return pc.build();
    }

    /**
     * The plugin configuration as compact JSON with keys sorted, as istiod's protomarshal.ToJSON
     * writes a Struct; protobuf-java's printer escapes characters such as '=' as \\u003d, which Go
     * does not, so the tree is written again without that escaping.
     */
    static String compactJson(Struct config) throws InvalidProtocolBufferException {
        String printed = JsonFormat.printer().sortingMapKeys().print(config);
        return new GsonBuilder().disableHtmlEscaping().create()
                .toJson(JsonParser.parseString(printed));
    }

    /** istiod's buildDataSource: file:// as a local file, anything else fetched through cluster "_" with its sha256. */
    static AsyncDataSource dataSource(WasmPlugin w) {
        if (w.getUrl().startsWith("file://")) {
            return AsyncDataSource.newBuilder().setLocal(DataSource.newBuilder()
                    .setFilename(w.getUrl().substring("file://".length()))).build();
        }
        return AsyncDataSource.newBuilder().setRemote(RemoteDataSource.newBuilder()
                .setHttpUri(HttpUri.newBuilder().setUri(w.getUrl()).setTimeout(Duration.newBuilder().setSeconds(30))
                        .setCluster("_"))
                .setSha256(w.getSha256())).build();
    }
}
