package io.meshpilot.networking.envoy;

import io.meshpilot.api.networking.v1alpha3.ServerTLSSettings;
import io.meshpilot.model.CredentialNames;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushDiagnostics;
import io.meshpilot.model.PushMetric;
import java.util.List;
import java.util.function.BiPredicate;

/**
 * Gateway servers whose {@code credentialName} (or one of {@code credentialNames}) names no
 * credential, per connected gateway: istiod resolves a bare name in the gateway proxy's namespace,
 * a {@code kubernetes-gateway://<ns>/<name>} in {@code <ns>}, and serves nothing when it is
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
                    ServerTLSSettings tls = server.server().getTls();
                    boolean usesCredential = server.server().hasTls() && switch (tls.getMode()) {
                        case SIMPLE, MUTUAL, OPTIONAL_MUTUAL -> true;
                        default -> false;
                    };
                    if (!usesCredential) {
                        continue;
                    }
                    List<String> names = tls.getCredentialNamesCount() > 0 ? tls.getCredentialNamesList()
                            : tls.getCredentialName().isEmpty() ? List.of() : List.of(tls.getCredentialName());
                    for (String credentialName : names) {
                        CredentialNames.Resource secret = secretOf(credentialName, proxy);
                        if (secret == null) {
                            continue;
                        }
                        String where = server.gateway() + "|" + port.number() + "|" + secret.namespace() + "/";
                        if (!exists.test(secret.namespace(), secret.name())) {
                            out.add(MISSING_CREDENTIAL, where + secret.name(), proxy.id(),
                                    "Gateway " + server.gateway() + " port " + port.number() + ": credentialName \""
                                            + credentialName + "\" not found in namespace " + secret.namespace()
                                            + "; the gateway gets no certificate for it");
                        } else if (tls.getMode() != ServerTLSSettings.TLSmode.SIMPLE && tls.getCaCertCredentialName().isEmpty()
                                && credentialName.equals(names.get(0))
                                && !hasCa.test(secret.namespace(), secret.name() + CredentialNames.CA_SUFFIX)) {
                            out.add(MISSING_CREDENTIAL, where + secret.name() + CredentialNames.CA_SUFFIX, proxy.id(),
                                    "Gateway " + server.gateway() + " port " + port.number() + ": " + tls.getMode()
                                            + " needs a CA: neither \"" + secret.name() + "-cacert\" nor \"" + secret.name()
                                            + "\" has one in namespace " + secret.namespace());
                        }
                    }
                }
            }
        }
    }

    /**
     * The Secret a credential name refers to: a bare name in the proxy's namespace, a
     * {@code kubernetes-gateway://} name where it says; null for what is no Secret
     * ({@code builtin://}, {@code configmap://}, {@code invalid://}, whose status says why).
     */
    private static CredentialNames.Resource secretOf(String credentialName, Proxy proxy) {
        if (credentialName.startsWith(CredentialNames.BUILTIN)) {
            return null;
        }
        CredentialNames.Resource r = CredentialNames.parse(CredentialNames.toResourceName(credentialName), proxy.namespace());
        return r == null || r.type() == CredentialNames.Type.CONFIG_MAP || r.type() == CredentialNames.Type.INVALID ? null : r;
    }
}
