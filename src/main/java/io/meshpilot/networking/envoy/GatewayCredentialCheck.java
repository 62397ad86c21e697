package io.meshpilot.networking.envoy;

import io.meshpilot.api.networking.v1alpha3.ServerTLSSettings;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushDiagnostics;
import io.meshpilot.model.PushMetric;
import java.util.function.BiPredicate;

/**
 * Gateway servers whose {@code credentialName} names no credential, per connected gateway:
 * istiod resolves the name in the gateway proxy's namespace and serves nothing when it is
 * missing, so Envoy keeps that listener warming (no TLS on the port) while the rest of the
 * config applies. The check runs against the credentials as they are now, so adding the
 * Secret clears the entry without a new push.
 */
public final class GatewayCredentialCheck {
    /** Ours (istiod only counts pilot_sds_certificate_errors_total when a gateway asks). */
    public static final PushMetric MISSING_CREDENTIAL = PushMetric.of("pilot_gateway_credential_missing",
            "Gateway servers whose credentialName names no credential in the gateway's namespace.");

    private GatewayCredentialCheck() {
    }

    /**
     * @param exists whether a credential {@code (namespace, name)} exists
     */
    public static void run(PushContext push, Iterable<Proxy> routers, BiPredicate<String, String> exists,
                           PushDiagnostics.Builder out) {
        run(push, routers, exists, (ns, name) -> true, out);
    }

    /**
     * @param hasCa whether the CA part exists for a credential name ({@code <name>-cacert} or
     *              the credential's own CA): MUTUAL servers need it to verify clients
     */
    public static void run(PushContext push, Iterable<Proxy> routers, BiPredicate<String, String> exists,
                           BiPredicate<String, String> hasCa, PushDiagnostics.Builder out) {
        for (Proxy proxy : routers) {
            for (MergedGateway.ServerPort port : MergedGateway.of(proxy, push).ports()) {
                for (MergedGateway.GatewayServer server : port.servers()) {
                    if (!server.server().hasTls()) {
                        continue;
                    }
                    ServerTLSSettings tls = server.server().getTls();
                    boolean usesCredential = switch (tls.getMode()) {
                        case SIMPLE, MUTUAL, OPTIONAL_MUTUAL -> !tls.getCredentialName().isEmpty();
                        default -> false;
                    };
                    if (usesCredential && exists.test(proxy.namespace(), tls.getCredentialName())
                            && tls.getMode() != ServerTLSSettings.TLSmode.SIMPLE
                            && !hasCa.test(proxy.namespace(), tls.getCredentialName() + "-cacert")) {
                        out.add(MISSING_CREDENTIAL, server.gateway() + "|" + port.number() + "|"
                                        + proxy.namespace() + "/" + tls.getCredentialName() + "-cacert", proxy.id(),
                                "Gateway " + server.gateway() + " port " + port.number() + ": " + tls.getMode()
                                        + " needs a CA: neither \"" + tls.getCredentialName() + "-cacert\" nor \""
                                        + tls.getCredentialName() + "\" has one in namespace " + proxy.namespace());
                    }
                    if (usesCredential && !exists.test(proxy.namespace(), tls.getCredentialName())) {
                        out.add(MISSING_CREDENTIAL, server.gateway() + "|" + port.number() + "|"
                                        + proxy.namespace() + "/" + tls.getCredentialName(), proxy.id(),
                                "Gateway " + server.gateway() + " port " + port.number() + ": credentialName \""
                                        + tls.getCredentialName() + "\" not found in namespace " + proxy.namespace()
                                        + "; the gateway gets no certificate for it");
                    }
                }
            }
        }
    }
}
