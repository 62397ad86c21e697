package io.meshpilot.config.kube.gateway.convert;

import io.meshpilot.api.networking.v1alpha3.HTTPMatchRequest;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import io.meshpilot.api.networking.v1alpha3.StringMatch;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.config.GeneratedConfigAnnotations;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * HTTP and gRPC VirtualServices of every route into one per parent and host (istiod's
 * mergeHTTPRoutes): the Gateway API orders matches across routes, so all routes bound to one
 * listener and host become one VirtualService named after that key, oldest route first, then
 * sorted by the API's precedence (sortHTTPRoutes).
 */
final class RouteMerge {
    /** A VirtualService of one route, with the parent and host it merges under ({@code parent/host}). */
    record Keyed(String key, Config virtualService) {
    }

    /** Oldest first (creation time; none counts as oldest), then namespace, then name. */
    static final Comparator<Config> OLDEST_FIRST = Comparator
            .comparing((Config c) -> c.creationTimestamp() == null ? Instant.MIN : c.creationTimestamp())
            .thenComparing(Config::namespace).thenComparing(Config::name);

    /**
     * The Gateway API's precedence: routes with a match before those without; exact before
     * prefix before regex paths; longer paths first; with a method first; more header
     * matches, then more query matches first. Ties keep their order (the sort must be stable).
     */
    static final Comparator<HTTPRoute> PRECEDENCE = (a, b) -> {
        if (a.getMatchCount() == 0 || b.getMatchCount() == 0) {
            return Boolean.compare(a.getMatchCount() == 0, b.getMatchCount() == 0);
        }
        HTTPMatchRequest m1 = a.getMatch(0);
        HTTPMatchRequest m2 = b.getMatch(0);
        int c = Integer.compare(uriRank(m2), uriRank(m1));
        if (c == 0) {
            c = Integer.compare(uriLength(m2), uriLength(m1));
        }
        if (c == 0) {
            c = Boolean.compare(m2.hasMethod(), m1.hasMethod());
        }
        if (c == 0) {
            c = Integer.compare(m2.getHeadersCount(), m1.getHeadersCount());
        }
        if (c == 0) {
            c = Integer.compare(m2.getQueryParamsCount(), m1.getQueryParamsCount());
        }
        return c;
    };

    private RouteMerge() {
    }

    /** {@code routes} sorted by {@link #PRECEDENCE}, stably. */
    static List<HTTPRoute> sorted(List<HTTPRoute> routes) {
        List<HTTPRoute> out = new ArrayList<>(routes);
        out.sort(PRECEDENCE);
        return out;
    }

    /** One VirtualService per key, named after the key with {@code /} as {@code ~}; by key order. */
    static List<Config> merge(List<Keyed> virtualServices) {
        Map<String, List<Config>> byKey = new TreeMap<>();
        for (Keyed k : virtualServices) {
            byKey.computeIfAbsent(k.key(), x -> new ArrayList<>()).add(k.virtualService());
        }
        List<Config> out = new ArrayList<>();
        byKey.forEach((key, configs) -> out.add(merged(key.replace('/', '~'), configs)));
        return out;
    }

    private static Config merged(String name, List<Config> configs) {
        List<Config> ordered = new ArrayList<>(configs);
        ordered.sort(OLDEST_FIRST);
        Config base = ordered.get(0);
        if (ordered.size() == 1) {
            return renamed(base, name);
        }
        VirtualService.Builder vs = ((VirtualService) base.spec()).toBuilder().clearHttp();
        List<HTTPRoute> http = new ArrayList<>();
        List<String> parents = new ArrayList<>();
        for (Config c : ordered) {
            http.addAll(((VirtualService) c.spec()).getHttpList());
            parents.add(c.annotations().getOrDefault(GeneratedConfigAnnotations.PARENTS, ""));
        }
        Map<String, String> annotations = new HashMap<>(base.annotations());
        annotations.put(GeneratedConfigAnnotations.PARENTS, String.join(",", parents));
        return renamed(base, name).withSpec(vs.addAllHttp(sorted(http)).build()).withAnnotations(annotations);
    }

    private static Config renamed(Config c, String name) {
        return new Config(c.gvk(), name, c.namespace(), c.labels(), c.annotations(), c.resourceVersion(),
                c.generation(), c.creationTimestamp(), c.spec(), c.status());
    }

    /** Exact 3, prefix 2, regex 1, none -1 (istiod's getURIRank). */
    private static int uriRank(HTTPMatchRequest m) {
        if (!m.hasUri()) {
            return -1;
        }
        return switch (m.getUri().getMatchTypeCase()) {
            case EXACT -> 3;
            case PREFIX -> 2;
            case REGEX -> 1;
            default -> -1;
        };
    }

    private static int uriLength(HTTPMatchRequest m) {
        if (!m.hasUri()) {
            return 0;
        }
        StringMatch uri = m.getUri();
        return switch (uri.getMatchTypeCase()) {
            case EXACT -> utf8Length(uri.getExact());
            case PREFIX -> utf8Length(uri.getPrefix());
            case REGEX -> utf8Length(uri.getRegex());
            default -> -1;
        };
    }

    /** Go's len: bytes, not characters. */
    private static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }
}
