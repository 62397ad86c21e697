package io.meshpilot.networking.envoy;

import io.meshpilot.api.networking.v1alpha3.Gateway;
import io.meshpilot.api.networking.v1alpha3.Server;
import io.meshpilot.api.networking.v1alpha3.ServerTLSSettings;
import io.meshpilot.config.Config;
import io.meshpilot.config.GeneratedConfigAnnotations;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.config.kube.gateway.ReferenceGrants;
import io.meshpilot.model.CredentialNames;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The certificate references of a gateway proxy's Gateways that SDS may serve it as
 * {@code kubernetes-gateway://} names (istiod's MergedGateway.VerifiedCertificateReferences,
 * pilot/pkg/model/gateway.go mergeGateways). A Gateway counts only when the proxy's verified
 * identity is of the Gateway's namespace (or its parent's) and of its service account (when it
 * names one); its Secrets then count when they are in that namespace, or when a ReferenceGrant
 * lets the Gateway (or ListenerSet) refer to them. MUTUAL servers' {@code -cacert} twins count
 * with them, and so does a {@code kubernetes-gateway://} {@code caCertCredentialName}.
 */
public final class CertificateReferences {
    private CertificateReferences() {
    }

    /**
     * @param identityNamespace the namespace of the stream's verified identity
     * @param serviceAccount    the service account of the stream's verified identity
     */
    public static Set<String> verified(MergedGateway merged, String identityNamespace, String serviceAccount,
                                       ReferenceGrants grants) {
        Set<String> out = new HashSet<>();
        for (Config c : merged.gateways()) {
            String expectedServiceAccount = c.annotations().getOrDefault(GeneratedConfigAnnotations.SERVICE_ACCOUNT_NAME, "");
            String parentNamespace = c.annotations().getOrDefault(GeneratedConfigAnnotations.PARENT_NAMESPACE, "");
            String expectedNamespace = parentNamespace.isEmpty() ? c.namespace() : parentNamespace;
            if (!expectedNamespace.equals(identityNamespace)
                    || !(expectedServiceAccount.isEmpty() || expectedServiceAccount.equals(serviceAccount))) {
                continue;
            }
            boolean listenerSet = c.annotations().getOrDefault(GeneratedConfigAnnotations.PARENTS, "")
                    .startsWith(GatewayApiKinds.LISTENER_SET + "/");
            Referrer referrer = new Referrer(listenerSet ? GatewayApiKinds.LISTENER_SET : GatewayApiKinds.GATEWAY,
                    listenerSet ? c.namespace() : identityNamespace,
                    listenerSet || c.namespace().equals(identityNamespace), identityNamespace, grants);
            for (Server server : ((Gateway) c.spec()).getServersList()) {
                ServerTLSSettings tls = server.getTls();
                boolean mutual = tls.getMode() == ServerTLSSettings.TLSmode.MUTUAL
                        || tls.getMode() == ServerTLSSettings.TLSmode.OPTIONAL_MUTUAL;
                List<String> names = tls.getCredentialNamesCount() > 0 ? tls.getCredentialNamesList()
                        : List.of(tls.getCredentialName());
                for (String name : names) {
                    if (name.isEmpty() || name.startsWith(CredentialNames.BUILTIN)) {
                        continue; // builtin:// is the workload's own certificate, no Secret
                    }
                    String resource = CredentialNames.toResourceName(name);
                    if (referrer.mayRead(resource)) {
                        out.add(resource);
                        if (mutual) {
                            out.add(resource + CredentialNames.CA_SUFFIX);
                        }
                    }
                }
                String ca = tls.getCaCertCredentialName();
                if (ca.startsWith(CredentialNames.KUBERNETES_GATEWAY) && referrer.mayRead(ca)) {
                    out.add(ca);
                }
            }
        }
        return Set.copyOf(out);
    }

    /**
     * Who refers to the Secrets: a Gateway (or ListenerSet) whose references are looked up in
     * {@code lookupNamespace}; {@code sameNamespaceTrusted} when the config and the proxy share a
     * namespace (or the config is a ListenerSet, trusted through the Gateway's allowedListeners).
     */
    private record Referrer(String kind, String lookupNamespace, boolean sameNamespaceTrusted, String identityNamespace,
                            ReferenceGrants grants) {
        boolean mayRead(String resourceName) {
            CredentialNames.Resource r = CredentialNames.parse(resourceName, identityNamespace);
            if (r == null) {
                return false;
            }
            if (sameNamespaceTrusted && r.namespace().equals(lookupNamespace)) {
                return true;
            }
            // istiod's SecretAllowed: only a ReferenceGrant from the referrer's namespace to the Secret's
            return !r.namespace().equals(lookupNamespace)
                    && grants.allowed(kind, lookupNamespace, "", "Secret", r.namespace(), r.name());
        }
    }
}
