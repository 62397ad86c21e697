package io.meshpilot.config.validation.networking;

import io.meshpilot.api.networking.v1alpha3.EnvoyFilter;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.ApplyTo;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.Patch.Operation;
import io.meshpilot.api.type.v1beta1.PolicyTargetReference;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;
import java.util.Map;
import java.util.Set;

/**
 * istiod's EnvoyFilter rules: workloadSelector and targetRefs exclusive and valid; per config
 * patch an applyTo, a patch with an operation, a value for every operation but REMOVE, a
 * compilable proxyVersion regex, a match of the applyTo's class (listener, route configuration
 * or cluster), filter/sub-filter matches as istiod requires. istiod cannot check the Envoy
 * fragment without Envoy's protos here; operations that istiod silently ignores for an applyTo
 * are warnings, as istioctl analyze reports them.
 */
public final class EnvoyFilterValidator implements Validator {
    private static final String HCM = "envoy.filters.network.http_connection_manager";
    private static final Set<String> HCM_NAMES = Set.of(HCM, "envoy.http_connection_manager");
    /** Deprecated filter names and their replacements (a warning, as in istiod). */
    private static final Map<String, String> DEPRECATED_FILTERS = Map.of(
            "envoy.http_connection_manager", HCM,
            "envoy.tcp_proxy", "envoy.filters.network.tcp_proxy",
            "envoy.router", "envoy.filters.http.router",
            "envoy.cors", "envoy.filters.http.cors",
            "envoy.fault", "envoy.filters.http.fault",
            "envoy.lua", "envoy.filters.http.lua",
            "envoy.ext_authz", "envoy.filters.http.ext_authz",
            "envoy.grpc_web", "envoy.filters.http.grpc_web",
            "envoy.health_check", "envoy.filters.http.health_check",
            "envoy.listener.tls_inspector", "envoy.filters.listener.tls_inspector");
    private static final Set<ApplyTo> INSERT_TARGETS = Set.of(ApplyTo.NETWORK_FILTER, ApplyTo.HTTP_FILTER,
            ApplyTo.LISTENER_FILTER, ApplyTo.HTTP_ROUTE);

    @Override
    public void validate(Config config, Validation v) {
        NetworkingChecks.metadata(config, v);
        EnvoyFilter ef = (EnvoyFilter) config.spec();
        Validation spec = v.at("spec");
        spec.at("configPatches").warn("EnvoyFilter exposes implementation details that may change at any time; "
                + "prefer other APIs where possible and take care on upgrades");
        if (ef.hasWorkloadSelector()) {
            NetworkingChecks.workloadSelector(spec.at("workloadSelector").at("labels"), ef.getWorkloadSelector().getLabelsMap(),
                    "workload selector without labels: the filter applies to every workload in the namespace");
        }
        if (ef.hasWorkloadSelector() && ef.getTargetRefsCount() > 0) {
            spec.at("targetRefs").error("only one of targetRefs or workloadSelector can be set");
        }
        for (int i = 0; i < ef.getTargetRefsCount(); i++) {
            targetRef(spec.at("targetRefs", i), ef.getTargetRefs(i));
        }
        for (int i = 0; i < ef.getConfigPatchesCount(); i++) {
            patch(spec.at("configPatches", i), ef.getConfigPatches(i));
        }
    }

    /** istiod's policy target references: a name, no namespace, a Service, ServiceEntry, Gateway or GatewayClass. */
    static void targetRef(Validation v, PolicyTargetReference ref) {
        if (ref.getName().isEmpty()) {
            v.at("name").error("targetRef name must be set");
        }
        if (!ref.getNamespace().isEmpty()) {
            v.at("namespace").error("targetRef namespace must not be set (no cross-namespace references)");
        }
        String group = ref.getGroup().isEmpty() ? "core" : ref.getGroup();
        boolean allowed = (group.equals("core") && ref.getKind().equals("Service"))
                || (group.equals("networking.istio.io") && ref.getKind().equals("ServiceEntry"))
                || (group.equals("gateway.networking.k8s.io")
                    && (ref.getKind().equals("Gateway") || ref.getKind().equals("GatewayClass")));
        if (!allowed) {
            v.at("kind").error("targetRef must be a Service, networking.istio.io ServiceEntry or "
                    + "gateway.networking.k8s.io Gateway/GatewayClass (is " + ref.getGroup() + "/" + ref.getKind() + ")");
        }
    }

    private static void patch(Validation v, EnvoyFilter.EnvoyConfigObjectPatch cp) {
        if (cp.getMatch().getContext() == EnvoyFilter.PatchContext.WAYPOINT) {
            return; // istiod does not validate waypoint patches (yet)
        }
        ApplyTo applyTo = cp.getApplyTo();
        if (applyTo == ApplyTo.INVALID) {
            v.at("applyTo").error("applyTo is required");
            return;
        }
        if (!cp.hasPatch()) {
            v.at("patch").error("patch is required");
            return;
        }
        Operation op = cp.getPatch().getOperation();
        if (op == Operation.INVALID) {
            v.at("patch").at("operation").error("patch operation is required");
            return;
        }
        if (op != Operation.REMOVE && !cp.getPatch().hasValue()) {
            v.at("patch").at("value").error("patch value is required for operation " + op);
            return;
        }
        EnvoyFilter.EnvoyConfigObjectMatch match = cp.getMatch();
        if (cp.hasMatch() && !match.getProxy().getProxyVersion().isEmpty()
                && !NetworkingChecks.regex(v.at("match").at("proxy").at("proxyVersion"), match.getProxy().getProxyVersion())) {
            return;
        }
        boolean typed = match.getObjectTypesCase() != EnvoyFilter.EnvoyConfigObjectMatch.ObjectTypesCase.OBJECTTYPES_NOT_SET;
        switch (applyTo) {
            case LISTENER, FILTER_CHAIN, NETWORK_FILTER, HTTP_FILTER -> {
                if (typed && !match.hasListener()) {
                    v.at("match").error("applyTo " + applyTo + " needs a listener match");
                    return;
                }
                if (!listenerMatch(v.at("match").at("listener"), applyTo, match.getListener())) {
                    return;
                }
            }
            case ROUTE_CONFIGURATION, VIRTUAL_HOST, HTTP_ROUTE -> {
                if (typed && !match.hasRouteConfiguration()) {
                    v.at("match").error("applyTo " + applyTo + " needs a routeConfiguration match");
                }
            }
            case CLUSTER -> {
                if (typed && !match.hasCluster()) {
                    v.at("match").error("applyTo CLUSTER needs a cluster match");
                }
            }
            default -> {
            }
        }
        ignoredOperation(v.at("patch").at("operation"), applyTo, op);
    }

    private static boolean listenerMatch(Validation v, ApplyTo applyTo, EnvoyFilter.ListenerMatch lm) {
        if (!lm.hasFilterChain() || !lm.getFilterChain().hasFilter()) {
            return true;
        }
        EnvoyFilter.ListenerMatch.FilterMatch filter = lm.getFilterChain().getFilter();
        Validation at = v.at("filterChain").at("filter");
        if (applyTo == ApplyTo.LISTENER || applyTo == ApplyTo.FILTER_CHAIN) {
            at.warn("a filter match has no effect with applyTo " + applyTo);
        }
        if (filter.getName().isEmpty()) {
            at.at("name").error("filter match has no name to match on");
            return false;
        }
        if (filter.hasSubFilter()) {
            if (applyTo != ApplyTo.HTTP_FILTER) {
                at.at("subFilter").error("a subFilter match can only be used with applyTo HTTP_FILTER");
                return false;
            }
            if (!HCM_NAMES.contains(filter.getName())) {
                at.at("subFilter").error("a subFilter match needs the filter match " + HCM);
                return false;
            }
            if (filter.getSubFilter().getName().isEmpty()) {
                at.at("subFilter").at("name").error("subFilter match has no name to match on");
                return false;
            }
        }
        deprecatedName(at.at("name"), filter.getName());
        if (filter.hasSubFilter()) {
            deprecatedName(at.at("subFilter").at("name"), filter.getSubFilter().getName());
        }
        return true;
    }

    private static void deprecatedName(Validation v, String name) {
        String replacement = DEPRECATED_FILTERS.get(name);
        if (replacement != null) {
            v.warn("deprecated filter name \"" + name + "\"; use \"" + replacement + "\"");
        }
    }

    /** Operations istiod accepts but ignores for an applyTo (istioctl analyze IST0152-IST0154). */
    private static void ignoredOperation(Validation v, ApplyTo applyTo, Operation op) {
        boolean ignored = switch (op) {
            case REPLACE -> applyTo != ApplyTo.HTTP_FILTER && applyTo != ApplyTo.NETWORK_FILTER;
            case ADD -> applyTo == ApplyTo.ROUTE_CONFIGURATION || applyTo == ApplyTo.HTTP_ROUTE
                    || applyTo == ApplyTo.BOOTSTRAP;
            case REMOVE -> applyTo == ApplyTo.ROUTE_CONFIGURATION || applyTo == ApplyTo.BOOTSTRAP
                    || applyTo == ApplyTo.EXTENSION_CONFIG;
            case INSERT_BEFORE, INSERT_AFTER, INSERT_FIRST -> !INSERT_TARGETS.contains(applyTo);
            case MERGE -> applyTo == ApplyTo.EXTENSION_CONFIG;
            default -> false;
        };
        if (ignored) {
            v.warn("operation " + op + " has no effect with applyTo " + applyTo);
        }
    }
}
