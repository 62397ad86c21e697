package io.meshpilot.bootstrap;

import io.meshpilot.admin.DebugResource;
import io.meshpilot.xds.DebugPages;
import io.meshpilot.xds.DebugRequest;
import io.meshpilot.xds.DiscoveryServer;
import io.meshpilot.util.PrintableText;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The admin {@code /debug/*} endpoints for the xDS type {@code istio.io/debug}: each request is
 * a GET to this process's own http listener over loopback, where the same JAX-RS handlers
 * answer as they answer {@code istioctl} over HTTP (loopback callers read freely, as
 * istiod's debug mux is called without its HTTP authorization). As istiod's DebugGen, the body
 * is passed on whatever the status; a page that is not served answers Go's
 * {@code 404 page not found}; a caller outside the system namespace naming another
 * namespace's proxy gets the endpoints' own "not connected" text (istiod's CallerNamespaceKey).
 */
final class LoopbackDebugPages implements DebugPages, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(LoopbackDebugPages.class.getName());
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    private final URI base;
    private final DiscoveryServer xds;

    /**
     * @param host the http listener's host: loopback when it listens on every address
     * @param port the port it bound
     */
    LoopbackDebugPages(String host, int port, DiscoveryServer xds) {
        String h = host == null || host.isEmpty() || host.equals("0.0.0.0") || host.equals("::") ? "127.0.0.1" : host;
        this.base = URI.create("http://" + (h.contains(":") ? "[" + h + "]" : h) + ":" + port + "/debug/");
        this.xds = xds;
    }

    @Override
    public String body(DebugRequest request, String callerNamespace) {
        String page = request.page();
        if (!page.equals("list") && !DebugResource.endpointNames().contains(page)) {
            return PAGE_NOT_FOUND;
        }
        String proxyId = request.parameter("proxyID");
        if (!callerNamespace.isEmpty() && !proxyId.isEmpty() && xds.connectedOutside(proxyId, callerNamespace)) {
            return DebugResource.NOT_CONNECTED;
        }
        try {
            // the parameters checked above, re-encoded: the page reads exactly what was checked
            HttpResponse<String> answer = client.send(HttpRequest.newBuilder(base.resolve(request.pathAndQuery()))
                    .timeout(TIMEOUT).GET().build(), HttpResponse.BodyHandlers.ofString());
            return answer.body();
        } catch (IOException | IllegalArgumentException e) {
            // the request is the caller's: one line, bounded (the exception text may repeat it)
            String failure = "debug page " + PrintableText.clip(request.pathAndQuery(), 256) + " failed: "
                    + PrintableText.clip(String.valueOf(e.getMessage()), 256);
            LOG.log(Level.WARNING, "istio.io/debug " + failure);
            return failure + "\n";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "debug page " + PrintableText.clip(request.pathAndQuery(), 256) + " interrupted\n";
        }
    }

    /** Stops the client's connections and its selector thread. */
    @Override
    public void close() {
        client.close();
    }
}
