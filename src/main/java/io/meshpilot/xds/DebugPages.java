package io.meshpilot.xds;

/**
 * The admin {@code /debug/*} endpoints, called in this process for the xDS type
 * {@code istio.io/debug} (istiod's DebugGen runs its debug mux the same way). The admin
 * surface lives above {@code xds}, so the wiring hands this in
 * ({@link DiscoveryServer#serveDebugPages}).
 */
@FunctionalInterface
public interface DebugPages {
    /** Go's http.NotFound body, what istiod's debug mux answers for a page it does not have. */
    String PAGE_NOT_FOUND = "404 page not found\n";

    /** What a debug request answers when the admin surface is not up (yet), as an unknown page. */
    DebugPages NONE = (request, callerNamespace) -> PAGE_NOT_FOUND;

    /**
     * The body {@code GET /debug/<request>} answers, whatever its status (istiod passes error
     * texts on as they are).
     *
     * @param request         the page and its parameters, e.g. {@code syncz} or {@code config_dump?proxyID=a.default}
     * @param callerNamespace "" for a caller that reads every proxy; else a namespace whose own
     *                        proxies alone may be named by {@code proxyID}
     */
    String body(DebugRequest request, String callerNamespace);
}
