package io.meshpilot.networking.envoy;

import io.meshpilot.api.networking.v1alpha3.HTTPMatchRequest;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import io.meshpilot.api.networking.v1alpha3.StringMatch;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.model.PushContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Delegate VirtualServices (istiod's mergeVirtualServicesIfNeeded): a root HTTP route with
 * {@code delegate} is replaced by the delegate's HTTP routes, each match narrowed by the root's
 * matches. A delegate match must stay inside the root match it merges with (its URI under the
 * root's prefix, the same header conditions, port, gateways, source); combinations that
 * contradict are dropped. Only one level: a delegate's own delegates are ignored, and the
 * delegate must be exported to the root's namespace.
 */
final class DelegateRoutes {
    private static final System.Logger LOG = System.getLogger(DelegateRoutes.class.getName());

    private DelegateRoutes() {
    }

    /** One HTTP route ready to translate, with the VirtualService it came from (destinations resolve there). */
    record Expanded(HTTPRoute route, Config from) {
    }

    /** The delegate of {@code root} as the root's namespace sees it, if any. */
    static Optional<Config> delegate(HTTPRoute root, String rootNamespace, PushContext push) {
        if (push == null) {
            return Optional.empty();
        }
        String ns = root.getDelegate().getNamespace().isEmpty() ? rootNamespace : root.getDelegate().getNamespace();
        return push.delegateVirtualService(ns, root.getDelegate().getName(), rootNamespace);
    }

    /** The delegate's routes with the root route's matches merged in; empty when the delegate is unknown. */
    static List<Expanded> expand(HTTPRoute root, String rootNamespace, String rootName, PushContext push) {
        Optional<Config> d = delegate(root, rootNamespace, push);
        if (d.isEmpty()) {
            LOG.log(System.Logger.Level.DEBUG, "VirtualService {0}/{1}: delegate {2} not found or not exported",
                    rootNamespace, rootName, root.getDelegate());
            return List.of();
        }
        List<Expanded> out = new ArrayList<>();
        for (HTTPRoute leaf : ((VirtualService) d.get().spec()).getHttpList()) {
            if (leaf.hasDelegate()) {
                continue; // one level only
            }
            // short gateway names mean different Gateways in the two namespaces: compare them resolved
            List<HTTPMatchRequest> merged = merge(resolved(root.getMatchList(), rootNamespace),
                    resolved(leaf.getMatchList(), d.get().namespace()));
            if (merged == null) {
                continue; // every combination contradicts: the leaf route can never match here
            }
            out.add(new Expanded(leaf.toBuilder().clearMatch().addAllMatch(merged).build(), d.get()));
        }
        return out;
    }

    /** The matches with their {@code gateways} as {@code namespace/name} (or {@code mesh}). */
    private static List<HTTPMatchRequest> resolved(List<HTTPMatchRequest> matches, String namespace) {
        List<HTTPMatchRequest> out = new ArrayList<>(matches.size());
        for (HTTPMatchRequest m : matches) {
            if (m.getGatewaysCount() == 0) {
                out.add(m);
                continue;
            }
            HTTPMatchRequest.Builder b = m.toBuilder().clearGateways();
            for (String g : m.getGatewaysList()) {
                b.addGateways(g.equals(PushContext.MESH_GATEWAY) || g.contains("/") ? g : namespace + "/" + g);
            }
            out.add(b.build());
        }
        return out;
    }

    /** The merged matches, or null when the leaf has matches but none is compatible with any root match. */
    static List<HTTPMatchRequest> merge(List<HTTPMatchRequest> root, List<HTTPMatchRequest> leaf) {
        if (root.isEmpty()) {
            return leaf;
        }
        if (leaf.isEmpty()) {
            return root;
        }
        List<HTTPMatchRequest> out = new ArrayList<>();
        for (HTTPMatchRequest r : root) {
            for (HTTPMatchRequest l : leaf) {
                if (!conflicts(r, l)) {
                    out.add(merge(r, l));
                }
            }
        }
        return out.isEmpty() ? null : out;
    }

    private static HTTPMatchRequest merge(HTTPMatchRequest root, HTTPMatchRequest leaf) {
        HTTPMatchRequest.Builder out = leaf.toBuilder();
        if (!root.getName().isEmpty()) {
            out.setName(leaf.getName().isEmpty() ? root.getName() : root.getName() + "-" + leaf.getName());
        }
        if (!leaf.hasUri() && root.hasUri()) {
            out.setUri(root.getUri());
        }
        if (!leaf.hasScheme() && root.hasScheme()) {
            out.setScheme(root.getScheme());
        }
        if (!leaf.hasMethod() && root.hasMethod()) {
            out.setMethod(root.getMethod());
        }
        if (!leaf.hasAuthority() && root.hasAuthority()) {
            out.setAuthority(root.getAuthority());
        }
        root.getHeadersMap().forEach((k, v) -> { if (!leaf.containsHeaders(k)) { out.putHeaders(k, v); } });
        root.getQueryParamsMap().forEach((k, v) -> { if (!leaf.containsQueryParams(k)) { out.putQueryParams(k, v); } });
        root.getWithoutHeadersMap().forEach((k, v) -> {
            if (!leaf.containsWithoutHeaders(k)) {
                out.putWithoutHeaders(k, v);
            }
        });
        root.getSourceLabelsMap().forEach((k, v) -> {
            if (!leaf.containsSourceLabels(k)) {
                out.putSourceLabels(k, v);
            }
        });
        if (leaf.getPort() == 0) {
            out.setPort(root.getPort());
        }
        if (leaf.getGatewaysCount() == 0) {
            out.addAllGateways(root.getGatewaysList());
        }
        if (leaf.getSourceNamespace().isEmpty()) {
            out.setSourceNamespace(root.getSourceNamespace());
        }
        out.setIgnoreUriCase(leaf.getIgnoreUriCase() || root.getIgnoreUriCase());
        return out.build();
    }

    /** Whether the leaf match asks for something the root match excludes (istiod's hasConflict). */
    static boolean conflicts(HTTPMatchRequest root, HTTPMatchRequest leaf) {
        if (root.hasUri() && leaf.hasUri() && !within(root.getUri(), leaf.getUri())
                || root.hasScheme() && leaf.hasScheme() && !within(root.getScheme(), leaf.getScheme())
                || root.hasMethod() && leaf.hasMethod() && !within(root.getMethod(), leaf.getMethod())
                || root.hasAuthority() && leaf.hasAuthority() && !within(root.getAuthority(), leaf.getAuthority())) {
            return true;
        }
        if (root.getIgnoreUriCase() != leaf.getIgnoreUriCase() && root.hasUri() && leaf.hasUri()) {
            return true;
        }
        if (differ(root.getHeadersMap(), leaf.getHeadersMap())
                || differ(root.getQueryParamsMap(), leaf.getQueryParamsMap())
                || differ(root.getWithoutHeadersMap(), leaf.getWithoutHeadersMap())
                || differ(root.getSourceLabelsMap(), leaf.getSourceLabelsMap())) {
            return true;
        }
        if (root.getPort() != 0 && leaf.getPort() != 0 && root.getPort() != leaf.getPort()) {
            return true;
        }
        if (!root.getSourceNamespace().isEmpty() && !leaf.getSourceNamespace().isEmpty()
                && !root.getSourceNamespace().equals(leaf.getSourceNamespace())) {
            return true;
        }
        return root.getGatewaysCount() > 0 && leaf.getGatewaysCount() > 0
                && !root.getGatewaysList().containsAll(leaf.getGatewaysList());
    }

    /** A leaf string match inside the root's: the same exact value, or under the root's prefix. */
    private static boolean within(StringMatch root, StringMatch leaf) {
        return switch (root.getMatchTypeCase()) {
            case PREFIX -> leaf.getMatchTypeCase() == StringMatch.MatchTypeCase.PREFIX
                    && leaf.getPrefix().startsWith(root.getPrefix())
                    || leaf.getMatchTypeCase() == StringMatch.MatchTypeCase.EXACT
                    && leaf.getExact().startsWith(root.getPrefix());
            default -> root.equals(leaf);
        };
    }

    /** The same key with different conditions in both maps. */
    private static <V> boolean differ(Map<String, V> root, Map<String, V> leaf) {
        for (var e : root.entrySet()) {
            V other = leaf.get(e.getKey());
            if (other != null && !other.equals(e.getValue())) {
                return true;
            }
        }
        return false;
    }
}
