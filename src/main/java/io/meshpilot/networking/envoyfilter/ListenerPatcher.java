package io.meshpilot.networking.envoyfilter;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.ApplyTo;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.ListenerMatch;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.Patch.Operation;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.PatchContext;
import io.meshpilot.model.EnvoyFilterWrapper.ConfigPatch;
import io.meshpilot.model.MergedEnvoyFilters;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * istiod's listener_patch: LISTENER, LISTENER_FILTER, FILTER_CHAIN, NETWORK_FILTER and
 * HTTP_FILTER patches, in its order (listener, its listener filters, then each filter chain,
 * its network filters, and the HTTP filters of each HTTP connection manager). An inbound HCM's
 * inline route configuration takes the ROUTE_CONFIGURATION, VIRTUAL_HOST and HTTP_ROUTE
 * patches of the inbound context, as istiod patches it when it builds the inbound HCM.
 */
final class ListenerPatcher {
    static final String HCM = "envoy.filters.network.http_connection_manager";
    private static final String VIRTUAL_INBOUND = "virtualInbound";
    private static final String VIRTUAL_OUTBOUND = "virtualOutbound";

    private final PatchFailures failures;
    private final RoutePatcher routes;

    ListenerPatcher(PatchFailures failures, RoutePatcher routes) {
        this.failures = failures;
        this.routes = routes;
    }

    /** {@code listeners} patched; with {@code skipAdds} false, the ADD patches of {@code context} appended. */
    List<Listener> patch(PatchContext context, MergedEnvoyFilters efw, List<Listener> listeners, boolean skipAdds) {
        List<Listener> out = new ArrayList<>(listeners.size());
        for (Listener l : listeners) {
            patchListener(context, efw, l).ifPresent(out::add);
        }
        if (!skipAdds) {
            for (ConfigPatch lp : efw.patches(ApplyTo.LISTENER)) {
                if (lp.operation() == Operation.ADD && PatchMatch.addsIn(context, lp)) {
                    out.add((Listener) lp.value());
                }
            }
        }
        return out;
    }

    private Optional<Listener> patchListener(PatchContext context, MergedEnvoyFilters efw, Listener lis) {
        for (ConfigPatch lp : efw.patches(ApplyTo.LISTENER)) {
            if (!PatchMatch.context(context, lp) || !listenerMatch(lis, lp)) {
                continue;
            }
            if (lp.operation() == Operation.REMOVE) {
                return Optional.empty();
            }
            if (lp.operation() == Operation.MERGE) {
                lis = ProtoMerge.merge(lis, lp.value());
            }
        }
        Listener.Builder b = lis.toBuilder();
        if (efw.has(ApplyTo.LISTENER_FILTER)) {
            patchListenerFilters(context, efw, lis, b);
        }
        if (efw.has(ApplyTo.FILTER_CHAIN, ApplyTo.NETWORK_FILTER, ApplyTo.HTTP_FILTER, ApplyTo.ROUTE_CONFIGURATION,
                ApplyTo.VIRTUAL_HOST, ApplyTo.HTTP_ROUTE)) {
            patchFilterChains(context, efw, lis, b);
        }
        return Optional.of(b.build());
    }

    private void patchListenerFilters(PatchContext context, MergedEnvoyFilters efw, Listener lis, Listener.Builder b) {
        List<ListenerFilter> filters = ListOps.mutable(b.getListenerFiltersList());
        for (ConfigPatch lp : efw.patches(ApplyTo.LISTENER_FILTER)) {
            if (!PatchMatch.context(context, lp) || !listenerMatch(lis, lp)) {
                continue;
            }
            ListenerFilter value = (ListenerFilter) lp.value();
            String at = lp.match().getListener().getListenerFilter();
            boolean hasMatch = lp.match().hasListener() && !at.isEmpty();
            if (ListOps.apply(filters, lp.operation(), value, hasMatch, f -> f.getName().equals(at))) {
                continue;
            }
            switch (lp.operation()) {
                case MERGE -> {
                    if (hasMatch) {
                        for (int i = 0; i < filters.size(); i++) {
                            ListenerFilter f = filters.get(i);
                            // istiod merges into every listener filter; only the named one can take the value's type
                            if (!f.hasTypedConfig() || !f.getName().equals(at)) {
                                continue;
                            }
                            if (value.hasTypedConfig()) {
                                try {
                                    filters.set(i, f.toBuilder().setTypedConfig(
                                            ProtoMerge.mergeAny(f.getTypedConfig(), value.getTypedConfig())).build());
                                } catch (IllegalArgumentException e) {
                                    failures.failed(lp, "listener filter " + f.getName() + " of " + lis.getName(), e);
                                }
                            }
                        }
                    }
                }
                default -> { }
            }
        }
        b.clearListenerFilters().addAllListenerFilters(filters);
    }

    private void patchFilterChains(PatchContext context, MergedEnvoyFilters efw, Listener lis, Listener.Builder b) {
        // istiod drops a chain that has no filters (nil) before patching; a chain whose network
        // filters the patches all remove stays, empty
        List<FilterChain> chains = new ArrayList<>();
        for (FilterChain fc : b.getFilterChainsList()) {
            if (fc.getFiltersCount() > 0) {
                patchFilterChain(context, efw, lis, fc).ifPresent(chains::add);
            }
        }
        if (b.hasDefaultFilterChain() && b.getDefaultFilterChain().getFiltersCount() > 0) {
            Optional<FilterChain> d = patchFilterChain(context, efw, lis, b.getDefaultFilterChain());
            if (d.isPresent()) {
                b.setDefaultFilterChain(d.get());
            } else {
                b.clearDefaultFilterChain();
            }
        }
        for (ConfigPatch lp : efw.patches(ApplyTo.FILTER_CHAIN)) {
            if (lp.operation() == Operation.ADD && PatchMatch.context(context, lp) && listenerMatch(lis, lp)) {
                chains.add((FilterChain) lp.value());
            }
        }
        b.clearFilterChains().addAllFilterChains(chains);
    }

    private Optional<FilterChain> patchFilterChain(PatchContext context, MergedEnvoyFilters efw, Listener lis,
                                                   FilterChain fc) {
        for (ConfigPatch lp : efw.patches(ApplyTo.FILTER_CHAIN)) {
            if (!PatchMatch.context(context, lp) || !listenerMatch(lis, lp) || !filterChainMatch(lis, fc, lp)) {
                continue;
            }
            if (lp.operation() == Operation.REMOVE) {
                return Optional.empty();
            }
            if (lp.operation() == Operation.MERGE) {
                try {
                    fc = mergeFilterChain(fc, (FilterChain) lp.value());
                } catch (IllegalArgumentException e) {
                    failures.failed(lp, "a filter chain of " + lis.getName(), e);
                }
            }
        }
        return Optional.of(patchNetworkFilters(context, efw, lis, fc));
    }

    /** istiod: a patch's transport socket of the chain's socket name merges only the typed configs. */
    private static FilterChain mergeFilterChain(FilterChain fc, FilterChain patch) {
        if (patch.hasTransportSocket() && fc.hasTransportSocket()
                && patch.getTransportSocket().getName().equals(fc.getTransportSocket().getName())) {
            if (fc.getTransportSocket().hasTypedConfig() && patch.getTransportSocket().hasTypedConfig()) {
                return fc.toBuilder().setTransportSocket(fc.getTransportSocket().toBuilder().setTypedConfig(
                        ProtoMerge.mergeAny(fc.getTransportSocket().getTypedConfig(),
                                patch.getTransportSocket().getTypedConfig()))).build();
            }
            return fc;
        }
        return ProtoMerge.merge(fc, patch);
    }

    private FilterChain patchNetworkFilters(PatchContext context, MergedEnvoyFilters efw, Listener lis,
                                            FilterChain fc) {
        List<Filter> filters = ListOps.mutable(fc.getFiltersList());
        for (ConfigPatch lp : efw.patches(ApplyTo.NETWORK_FILTER)) {
            if (!PatchMatch.context(context, lp) || !listenerMatch(lis, lp) || !filterChainMatch(lis, fc, lp)) {
                continue;
            }
            Filter value = (Filter) lp.value();
            boolean hasMatch = hasNetworkFilterMatch(lp);
            ListOps.apply(filters, lp.operation(), value, hasMatch, f -> networkFilterMatch(f, lp));
        }
        for (int i = 0; i < filters.size(); i++) {
            filters.set(i, patchNetworkFilter(context, efw, lis, fc, filters.get(i)));
        }
        return fc.toBuilder().clearFilters().addAllFilters(filters).build();
    }

    private Filter patchNetworkFilter(PatchContext context, MergedEnvoyFilters efw, Listener lis, FilterChain fc,
                                      Filter filter) {
        for (ConfigPatch lp : efw.patches(ApplyTo.NETWORK_FILTER)) {
            if (lp.operation() != Operation.MERGE || !PatchMatch.context(context, lp) || !listenerMatch(lis, lp)
                    || !filterChainMatch(lis, fc, lp) || !networkFilterMatch(filter, lp) || !filter.hasTypedConfig()) {
                continue;
            }
            Filter user = (Filter) lp.value();
            Filter.Builder fb = filter.toBuilder();
            if (!user.getName().isEmpty()) {
                fb.setName(user.getName());
            }
            if (user.hasTypedConfig()) {
                try {
                    fb.setTypedConfig(ProtoMerge.mergeAny(filter.getTypedConfig(), user.getTypedConfig()));
                } catch (IllegalArgumentException e) {
                    failures.failed(lp, "network filter " + filter.getName() + " of " + lis.getName(), e);
                }
            }
            filter = fb.build();
        }
        if (filter.getName().equals(HCM) && filter.hasTypedConfig()) {
            return patchHttpConnectionManager(context, efw, lis, fc, filter);
        }
        return filter;
    }

    private Filter patchHttpConnectionManager(PatchContext context, MergedEnvoyFilters efw, Listener lis,
                                              FilterChain fc, Filter filter) {
        HttpConnectionManager hcm;
        try {
            hcm = filter.getTypedConfig().unpack(HttpConnectionManager.class);
        } catch (InvalidProtocolBufferException e) {
            return filter;
        }
        HttpConnectionManager.Builder hb = hcm.toBuilder();
        if (context == PatchContext.SIDECAR_INBOUND && hcm.hasRouteConfig()
                && efw.has(ApplyTo.ROUTE_CONFIGURATION, ApplyTo.VIRTUAL_HOST, ApplyTo.HTTP_ROUTE)) {
            hb.setRouteConfig(routes.patch(context, efw, hcm.getRouteConfig()));
        }
        if (efw.has(ApplyTo.HTTP_FILTER)) {
            hb.clearHttpFilters().addAllHttpFilters(patchHttpFilters(context, efw, lis, fc, filter,
                    hcm.getHttpFiltersList()));
        }
        return filter.toBuilder().setTypedConfig(Any.pack(hb.build())).build();
    }

    private List<HttpFilter> patchHttpFilters(PatchContext context, MergedEnvoyFilters efw, Listener lis,
                                              FilterChain fc, Filter filter, List<HttpFilter> in) {
        List<HttpFilter> filters = ListOps.mutable(in);
        for (ConfigPatch lp : efw.patches(ApplyTo.HTTP_FILTER)) {
            if (!PatchMatch.context(context, lp) || !listenerMatch(lis, lp) || !filterChainMatch(lis, fc, lp)
                    || !networkFilterMatch(filter, lp)) {
                continue;
            }
            HttpFilter value = (HttpFilter) lp.value();
            boolean hasMatch = hasHttpFilterMatch(lp);
            ListOps.apply(filters, lp.operation(), value, hasMatch, h -> httpFilterMatch(h, lp));
        }
        for (int i = 0; i < filters.size(); i++) {
            HttpFilter h = filters.get(i);
            for (ConfigPatch lp : efw.patches(ApplyTo.HTTP_FILTER)) {
                if (lp.operation() != Operation.MERGE || !PatchMatch.context(context, lp) || !listenerMatch(lis, lp)
                        || !filterChainMatch(lis, fc, lp) || !networkFilterMatch(filter, lp)
                        || !httpFilterMatch(h, lp) || !h.hasTypedConfig()) {
                    continue;
                }
                HttpFilter user = (HttpFilter) lp.value();
                HttpFilter.Builder hb = h.toBuilder();
                if (!user.getName().isEmpty()) {
                    hb.setName(user.getName());
                }
                if (user.hasTypedConfig()) {
                    try {
                        hb.setTypedConfig(ProtoMerge.mergeAny(h.getTypedConfig(), user.getTypedConfig()));
                    } catch (IllegalArgumentException e) {
                        failures.failed(lp, "HTTP filter " + h.getName() + " of " + lis.getName(), e);
                    }
                }
                h = hb.build();
            }
            filters.set(i, h);
        }
        return filters;
    }

    /** istiod's listenerMatch: name; port, except for the filters of the virtual listeners (matched per chain). */
    static boolean listenerMatch(Listener lis, ConfigPatch lp) {
        if (!lp.match().hasListener()) {
            return true;
        }
        ListenerMatch m = lp.match().getListener();
        if (!m.getName().isEmpty() && !m.getName().equals(lis.getName())) {
            return false;
        }
        if (lp.applyTo() != ApplyTo.LISTENER
                && (lis.getName().equals(VIRTUAL_INBOUND) || lis.getName().equals(VIRTUAL_OUTBOUND))) {
            return true;
        }
        if (m.getPortNumber() != 0) {
            return lis.getAddress().hasSocketAddress()
                    && lis.getAddress().getSocketAddress().getPortValue() == m.getPortNumber();
        }
        return true;
    }

    /** istiod's filterChainMatch: a virtual listener's chain by destination port, then name, SNI, protocols, port. */
    static boolean filterChainMatch(Listener lis, FilterChain fc, ConfigPatch lp) {
        if (!lp.match().hasListener()) {
            return true;
        }
        ListenerMatch lm = lp.match().getListener();
        boolean virtual = lis.getName().equals(VIRTUAL_INBOUND) || lis.getName().equals(VIRTUAL_OUTBOUND);
        if (virtual && lm.getPortNumber() > 0
                && fc.getFilterChainMatch().getDestinationPort().getValue() != lm.getPortNumber()) {
            return false;
        }
        if (!lm.hasFilterChain()) {
            return true;
        }
        ListenerMatch.FilterChainMatch m = lm.getFilterChain();
        var fcm = fc.getFilterChainMatch();
        if (!m.getName().isEmpty() && !m.getName().equals(fc.getName())) {
            return false;
        }
        if (!m.getSni().isEmpty() && !fcm.getServerNamesList().contains(m.getSni())) {
            return false;
        }
        if (!m.getTransportProtocol().isEmpty()
                && (!fc.hasFilterChainMatch() || !fcm.getTransportProtocol().equals(m.getTransportProtocol()))) {
            return false;
        }
        if (!m.getApplicationProtocols().isEmpty()) {
            if (!fc.hasFilterChainMatch()
                    || !fcm.getApplicationProtocolsList().containsAll(Arrays.asList(m.getApplicationProtocols().split(",")))) {
                return false;
            }
        }
        if (m.getDestinationPort() > 0) {
            return fcm.hasDestinationPort() && fcm.getDestinationPort().getValue() == m.getDestinationPort();
        }
        return true;
    }

    private static boolean hasNetworkFilterMatch(ConfigPatch lp) {
        return lp.match().hasListener() && lp.match().getListener().hasFilterChain()
                && lp.match().getListener().getFilterChain().hasFilter();
    }

    static boolean networkFilterMatch(Filter filter, ConfigPatch lp) {
        return !hasNetworkFilterMatch(lp)
                || lp.match().getListener().getFilterChain().getFilter().getName().equals(filter.getName());
    }

    private static boolean hasHttpFilterMatch(ConfigPatch lp) {
        return hasNetworkFilterMatch(lp) && lp.match().getListener().getFilterChain().getFilter().hasSubFilter();
    }

    static boolean httpFilterMatch(HttpFilter filter, ConfigPatch lp) {
        return !hasHttpFilterMatch(lp)
                || lp.match().getListener().getFilterChain().getFilter().getSubFilter().getName().equals(filter.getName());
    }
}
