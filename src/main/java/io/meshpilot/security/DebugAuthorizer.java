package io.meshpilot.security;

import io.meshpilot.features.PilotFeatures;
import java.util.List;
import java.util.Set;

/**
 * What an authenticated caller that is not local may read of the admin surface (istiod's
 * AuthorizeDebugRequest): the system namespace (the mesh root namespace, istio-system by
 * default) and DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES read everything; any other namespace
 * reads only config_dump, ndsz and edsz, and only about its own proxies. With
 * ENABLE_DEBUG_ENDPOINT_AUTH=false every authenticated caller reads everything.
 */
public final class DebugAuthorizer {
    /** istiod's activeNamespaceDebuggers: the endpoints a workload namespace may ask about its proxies. */
    static final Set<String> NAMESPACE_ENDPOINTS = Set.of("/debug/config_dump", "/debug/ndsz", "/debug/edsz");

    private final PilotFeatures.DebugAuth settings;

    public DebugAuthorizer(PilotFeatures.DebugAuth settings) {
        this.settings = settings;
    }

    /** The outcome for one request. */
    public sealed interface Decision {
        /** Everything, about every proxy. */
        record Everything() implements Decision {
        }

        /** This endpoint, about proxies of {@code namespace} only (by {@code proxyID}). */
        record OwnNamespace(String namespace) implements Decision {
        }

        /** Refused (403), with the reason to tell the caller. */
        record Forbidden(String reason) implements Decision {
        }
    }

    /**
     * @param identities      the caller's identities from the authenticators
     * @param path            the request path
     * @param systemNamespace the mesh root namespace (istio-system when unset)
     */
    public Decision decide(List<String> identities, String path, String systemNamespace) {
        if (!settings.enforce()) {
            return new Decision.Everything();
        }
        String namespace = namespaceOf(identities);
        if (namespace == null) {
            return new Decision.Forbidden("no identity of the form spiffe://<trust-domain>/ns/<namespace>/sa/<name> in "
                    + identities);
        }
        if (namespace.equals(systemNamespace)) {
            return new Decision.Everything();
        }
        // istiod's getDebugConnection: every namespace but the system one finds only its own
        // proxies by proxyID, the allowed namespaces included (they may call every endpoint)
        if (settings.allowedNamespaces().contains(namespace) || NAMESPACE_ENDPOINTS.contains(path)) {
            return new Decision.OwnNamespace(namespace);
        }
        return new Decision.Forbidden("namespace " + namespace + " may read only " + NAMESPACE_ENDPOINTS.stream().sorted()
                .toList() + " about its own proxies; the system namespace " + systemNamespace
                + " reads everything, DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES every endpoint about their own proxies");
    }

    /**
     * What an xDS debug request (istio.io/debug/syncz over ADS) may read, as istiod's
     * StatusGen decides: a stream without a verified identity nothing (its caller cannot be
     * told apart from any other); the system namespace and DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES
     * every proxy; any other namespace the proxies of its own namespace. Unlike the HTTP
     * endpoints, there is no list of types a workload namespace may ask for.
     *
     * @param verifiedIdentities the identities XDS_AUTH verified on the stream (none on the plaintext port)
     */
    public Decision decideXdsDebug(List<String> verifiedIdentities, String systemNamespace) {
        if (!settings.enforce()) {
            return new Decision.Everything();
        }
        String namespace = namespaceOf(verifiedIdentities);
        if (namespace == null) {
            return new Decision.Forbidden("authentication required: xDS debug types need a caller authenticated on the"
                    + " secure port (XDS_AUTH) with an identity of the form spiffe://<trust-domain>/ns/<namespace>/sa/<name>");
        }
        if (namespace.equals(systemNamespace) || settings.allowedNamespaces().contains(namespace)) {
            return new Decision.Everything();
        }
        return new Decision.OwnNamespace(namespace);
    }

    /** The namespace of the first identity of Istio's form (istiod reads that one), or null. */
    private static String namespaceOf(List<String> identities) {
        return identities.stream().map(SpiffeIdentities::namespace).filter(n -> n != null).findFirst().orElse(null);
    }
}
