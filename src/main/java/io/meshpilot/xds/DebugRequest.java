package io.meshpilot.xds;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.SequencedMap;
import java.util.stream.Collectors;

/**
 * One {@code istio.io/debug} resource name parsed once, as istiod's {@code url.Parse(name)} and
 * {@code URL.Query()} read it: page and parameter names and values percent-decoded, the first
 * value of a repeated parameter wins (Go's {@code Query().Get}, Jersey's {@code @QueryParam}),
 * a pair that does not decode is dropped (Go's ParseQuery skips it). The namespace check and the
 * page must read the same parameters, so the page is called with {@link #pathAndQuery()}, which
 * re-encodes exactly what was parsed here (never the caller's raw text).
 *
 * @param page       the page, e.g. {@code config_dump}; "" when it does not decode
 * @param parameters each parameter's first value, in the order given
 */
public record DebugRequest(String page, SequencedMap<String, String> parameters) {
    public DebugRequest {
        parameters = Collections.unmodifiableSequencedMap(new LinkedHashMap<>(parameters));
    }

    /** Parses a resource name such as {@code config_dump?proxyID=a.default&include_eds=true}. */
    public static DebugRequest parse(String resourceName) {
        int query = resourceName.indexOf('?');
        String page = decoded(query < 0 ? resourceName : resourceName.substring(0, query));
        SequencedMap<String, String> parameters = new LinkedHashMap<>();
        if (query >= 0) {
            for (String pair : resourceName.substring(query + 1).split("&")) {
                int eq = pair.indexOf('=');
                String name = decoded(eq < 0 ? pair : pair.substring(0, eq));
                String value = decoded(eq < 0 ? "" : pair.substring(eq + 1));
                if (name != null && !name.isEmpty() && value != null) {
                    parameters.putIfAbsent(name, value);
                }
            }
        }
        return new DebugRequest(page == null ? "" : page, parameters);
    }

    /** The named parameter's value, "" when absent. */
    public String parameter(String name) {
        return parameters.getOrDefault(name, "");
    }

    /** The page and its parameters re-encoded, to resolve against {@code /debug/}. */
    public String pathAndQuery() {
        if (parameters.isEmpty()) {
            return encoded(page);
        }
        return encoded(page) + "?" + parameters.entrySet().stream()
                .map(p -> encoded(p.getKey()) + "=" + encoded(p.getValue())).collect(Collectors.joining("&"));
    }

    private static String decoded(String text) {
        try {
            return URLDecoder.decode(text, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException malformed) {
            return null;
        }
    }

    /** %20 rather than '+' for a space: path and query decoders agree on it. */
    private static String encoded(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
