package io.meshpilot.model;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.ApplyTo;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.EnvoyConfigObjectMatch;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.Patch.Operation;
import io.meshpilot.api.type.v1beta1.PolicyTargetReference;
import io.meshpilot.config.Config;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * An EnvoyFilter with its patch values converted once per push (istiod's EnvoyFilterWrapper):
 * the patches that cannot be converted are left out and reported, the others keep their
 * order.
 *
 * @param version the object's resource version: the patches it names change with it
 */
public record EnvoyFilterWrapper(String namespace, String name, String version, int priority, Instant created,
                                 Map<String, String> selector, List<PolicyTargetReference> targetRefs,
                                 List<ConfigPatch> patches) {

    /** istiod bounds the proxyVersion expression; a longer one matches no proxy. */
    private static final int MAX_PROXY_VERSION_LENGTH = 1024;
    private static final Set<ApplyTo> INSERTABLE = Set.of(ApplyTo.HTTP_FILTER, ApplyTo.NETWORK_FILTER,
            ApplyTo.HTTP_ROUTE, ApplyTo.LISTENER_FILTER);

    /**
     * One config patch ready to apply.
     *
     * @param owner        {@code namespace/name} of its EnvoyFilter
     * @param index        its position in {@code configPatches}
     * @param value        the converted value; null for REMOVE (or a patch without value)
     * @param proxyVersion the compiled {@code match.proxy.proxyVersion}, null when none is given
     * @param matchesNoProxy a proxyVersion that could not be compiled: as istiod, the patch applies nowhere
     */
    public record ConfigPatch(String owner, int index, ApplyTo applyTo, Operation operation,
                              EnvoyConfigObjectMatch match, Message value, Pattern proxyVersion,
                              boolean matchesNoProxy) {
        /** Whether {@code proxy}'s version and metadata satisfy {@code match.proxy} (istiod's proxyMatch). */
        public boolean matches(Proxy proxy) {
            if (!match.hasProxy()) {
                return true;
            }
            if (matchesNoProxy) {
                return false;
            }
            if (proxyVersion != null && (proxy.istioVersion().isEmpty()
                    || !proxyVersion.matcher(proxy.istioVersion()).find())) {
                return false;
            }
            for (var e : match.getProxy().getMetadataMap().entrySet()) {
                if (!e.getValue().equals(proxy.metadata().get(e.getKey()))) {
                    return false;
                }
            }
            return true;
        }

        /** {@code namespace/name[index]}: how push status and the cache name this patch. */
        public String id() {
            return owner + "[" + index + "]";
        }
    }

    /**
     * Converts {@code config}; each patch that cannot apply is reported to {@code skipped} with
     * its {@code configPatches[i]} and the reason, and left out.
     */
    public static EnvoyFilterWrapper of(Config config, BiConsumer<String, String> skipped) {
        EnvoyFilter ef = (EnvoyFilter) config.spec();
        String owner = config.namespace() + "/" + config.name();
        List<ConfigPatch> patches = new ArrayList<>();
        for (int i = 0; i < ef.getConfigPatchesCount(); i++) {
            EnvoyFilter.EnvoyConfigObjectPatch cp = ef.getConfigPatches(i);
            String where = owner + " configPatches[" + i + "]";
            if (!cp.hasPatch()) {
                continue; // validation refuses it; never fatal here
            }
            ApplyTo applyTo = cp.getApplyTo();
            if (applyTo == ApplyTo.BOOTSTRAP) {
                skipped.accept(where, "applyTo BOOTSTRAP is not applied: istiod applies it in istio-agent to the"
                        + " proxy's bootstrap file, never over xDS, and MeshPilot runs no agent; the patch is skipped");
                continue;
            }
            Operation op = cp.getPatch().getOperation();
            Message value = null;
            if (cp.getPatch().hasValue()) {
                try {
                    value = EnvoyPatchValues.convert(applyTo, cp.getPatch().getValue());
                } catch (IllegalArgumentException e) {
                    skipped.accept(where, "patch value is no valid Envoy config: " + e.getMessage()
                            + "; the patch is skipped");
                    continue;
                }
            } else if (op != Operation.REMOVE) {
                continue; // validation refuses it
            }
            String mismatch = op == Operation.MERGE ? mergeTypeMismatch(cp, value) : null;
            if (mismatch != null) {
                skipped.accept(where, mismatch + "; the patch is skipped");
                continue;
            }
            // as istiod: the insert operations mean ADD where there is no list to insert into
            if ((op == Operation.INSERT_AFTER || op == Operation.INSERT_BEFORE || op == Operation.INSERT_FIRST)
                    && !INSERTABLE.contains(applyTo)) {
                op = Operation.ADD;
            }
            String extensionProblem = applyTo == ApplyTo.EXTENSION_CONFIG ? extensionConfigProblem(op, value) : null;
            if (extensionProblem != null) {
                skipped.accept(where, extensionProblem + "; the patch is skipped");
                continue;
            }
            EnvoyConfigObjectMatch match = cp.hasMatch() ? cp.getMatch()
                    : EnvoyConfigObjectMatch.newBuilder().setContext(EnvoyFilter.PatchContext.ANY).build();
            Pattern version = null;
            boolean none = false;
            String expr = match.getProxy().getProxyVersion();
            if (!expr.isEmpty()) {
                if (expr.length() > MAX_PROXY_VERSION_LENGTH) {
                    none = true;
                } else {
                    try {
                        version = Pattern.compile(expr);
                    } catch (PatternSyntaxException e) {
                        none = true; // validation refuses it; match nothing rather than everything
                    }
                }
            }
            patches.add(new ConfigPatch(owner, i, applyTo, op, match, value, version, none));
        }
        List<PolicyTargetReference> refs = ef.getTargetRefsList();
        return new EnvoyFilterWrapper(config.namespace(), config.name(),
                config.resourceVersion() == null ? "" : config.resourceVersion(), ef.getPriority(),
                config.creationTimestamp() == null ? Instant.EPOCH : config.creationTimestamp(),
                ef.hasWorkloadSelector() ? ef.getWorkloadSelector().getLabelsMap() : null, refs, patches);
    }

    /**
     * Why an EXTENSION_CONFIG patch cannot be served over ECDS, or null when it can. istiod
     * serves only ADDed extension configs (InsertedExtensionConfigurations) and only to a proxy
     * asking for their name; a TypedExtensionConfig without name or typed config is refused by
     * Envoy (both are required), so serving it would only earn a NACK.
     */
    private static String extensionConfigProblem(Operation op, Message value) {
        if (op != Operation.ADD) {
            return "operation " + op + " has no effect with applyTo EXTENSION_CONFIG (istiod serves only the"
                    + " extension configs that ADD patches insert)";
        }
        var config = (TypedExtensionConfig) value;
        if (config.getName().isEmpty()) {
            return "the extension config has no name (ECDS serves it by the name a listener's config_discovery asks for)";
        }
        if (!config.hasTypedConfig() || config.getTypedConfig().getTypeUrl().isEmpty()) {
            return "extension config " + config.getName() + " has no typed_config (Envoy requires one)";
        }
        return null;
    }

    /** The typed config of the filters every generated listener may hold, by the names patches match them by. */
    private static final Map<String, String> FILTER_TYPES = Map.ofEntries(
            Map.entry("envoy.filters.network.http_connection_manager",
                    "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"),
            Map.entry("envoy.filters.network.tcp_proxy", "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy"),
            Map.entry("envoy.filters.network.rbac", "envoy.extensions.filters.network.rbac.v3.RBAC"),
            Map.entry("envoy.filters.http.router", "envoy.extensions.filters.http.router.v3.Router"),
            Map.entry("envoy.filters.http.fault", "envoy.extensions.filters.http.fault.v3.HTTPFault"),
            Map.entry("envoy.filters.http.cors", "envoy.extensions.filters.http.cors.v3.Cors"),
            Map.entry("envoy.filters.http.rbac", "envoy.extensions.filters.http.rbac.v3.RBAC"),
            Map.entry("envoy.filters.http.jwt_authn", "envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication"),
            Map.entry("envoy.filters.listener.tls_inspector",
                    "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector"),
            Map.entry("envoy.filters.listener.original_dst",
                    "envoy.extensions.filters.listener.original_dst.v3.OriginalDst"),
            Map.entry("envoy.filters.listener.http_inspector",
                    "envoy.extensions.filters.listener.http_inspector.v3.HttpInspector"));

    /**
     * A MERGE whose typed config cannot merge into the filter its match names (a filter of
     * ours, of known type): istiod's MergeAnyWithAny fails on it at every push; here it is
     * reported once. Null when the types agree or the target is not known here.
     */
    private static String mergeTypeMismatch(EnvoyFilter.EnvoyConfigObjectPatch cp, Message value) {
        var lm = cp.getMatch().getListener();
        String target = switch (cp.getApplyTo()) {
            case NETWORK_FILTER -> lm.getFilterChain().getFilter().getName();
            case HTTP_FILTER -> lm.getFilterChain().getFilter().getSubFilter().getName();
            case LISTENER_FILTER -> lm.getListenerFilter();
            default -> "";
        };
        String expected = FILTER_TYPES.get(target);
        if (expected == null || value == null) {
            return null;
        }
        var typedConfig = value.getDescriptorForType().findFieldByName("typed_config");
        if (typedConfig == null || !value.hasField(typedConfig)) {
            return null;
        }
        String url = ((Any) value.getField(typedConfig)).getTypeUrl();
        String type = url.substring(url.lastIndexOf('/') + 1);
        return type.equals(expected) ? null
                : "MERGE of a " + type + " into " + target + ", whose config is a " + expected;
    }

    public EnvoyFilterWrapper {
        selector = selector == null ? null : Map.copyOf(selector);
        targetRefs = List.copyOf(targetRefs);
        patches = List.copyOf(patches);
    }
}
