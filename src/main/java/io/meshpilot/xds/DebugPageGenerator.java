package io.meshpilot.xds;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.meshpilot.security.SpiffeIdentities;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * istiod's DebugGen (debuggen.go): the xDS type {@code istio.io/debug} names one debug page
 * ({@code syncz}, {@code configz}, {@code edsz?proxyID=...}, {@code list}) and is answered
 * with that page's body as one resource of type {@code istio.io/debug}. As istiod: a stream
 * without a verified identity ends Unauthenticated (whatever ENABLE_DEBUG_ENDPOINT_AUTH says),
 * a request naming other than one page ends InvalidArgument, and an identity outside the
 * system namespace ({@code --namespace}) may read only config_dump, ndsz and edsz, about the
 * proxies of its own namespace (else PermissionDenied).
 */
final class DebugPageGenerator {
    /** The type of the request and of the one resource answering it (istiod's v3.DebugType). */
    static final String TYPE = TypeUrls.DEBUG_PAGE;
    /** istiod's activeNamespaceDebuggers: what an identity outside the system namespace may ask. */
    private static final Set<String> NAMESPACE_PAGES = Set.of("config_dump", "ndsz", "edsz");

    private final String systemNamespace;
    private final Supplier<DebugPages> pages;

    /**
     * @param systemNamespace istiod's own namespace ({@code --namespace}), not the mesh root namespace
     * @param pages           the admin debug endpoints, once they are served
     */
    DebugPageGenerator(String systemNamespace, Supplier<DebugPages> pages) {
        this.systemNamespace = systemNamespace;
        this.pages = pages;
    }

    /** The generator for one stream, which answers only as far as its verified identities allow. */
    Generator forCaller(List<String> verifiedIdentities) {
        String identity = verifiedIdentities.stream().filter(id -> SpiffeIdentities.namespace(id) != null)
                .findFirst().orElse(null);
        return (proxy, push, names, wildcard) -> {
            if (identity == null) { // AdsService logs the refusal with the proxy
                throw Status.UNAUTHENTICATED.withDescription("authentication required").asRuntimeException();
            }
            if (names.size() != 1) {
                throw Status.INVALID_ARGUMENT.withDescription("exactly one debug request is required")
                        .asRuntimeException();
            }
            DebugRequest request = DebugRequest.parse(names.iterator().next());
            String namespace = SpiffeIdentities.namespace(identity);
            boolean system = namespace.equals(systemNamespace);
            if (!system && !NAMESPACE_PAGES.contains(request.page())) {
                throw Status.PERMISSION_DENIED.withDescription(
                        "the debug info is not available for current identity: \"" + identity + "\"").asRuntimeException();
            }
            String body = pages.get().body(request, system ? "" : namespace);
            return List.of(Any.newBuilder().setTypeUrl(TYPE)
                    .setValue(ByteString.copyFrom(body, StandardCharsets.UTF_8)).build());
        };
    }
}
