package io.meshpilot.config.kube.gateway;

import java.util.List;

/**
 * One listener of a parent that routes may attach to (istiod's parentInfo): what the
 * Gateway conversion publishes for the route conversion.
 *
 * @param internalName     the generated Istio Gateway the routes bind to ({@code namespace/name}), or {@code mesh}
 * @param allowedKinds     route kinds the listener admits, as {@code group/kind}
 * @param hostnames        {@code namespace/host} entries (istiod's form: {@code *}/host for any namespace)
 * @param originalHostname the listener's hostname as written; empty for none
 * @param sectionName      the listener's name
 * @param port             the listener's port
 * @param protocol         the listener's protocol ({@code HTTP}, {@code HTTPS}, {@code TLS}, {@code TCP}, ...)
 */
public record ParentListener(String internalName, List<String> allowedKinds, List<String> hostnames,
                             String originalHostname, String sectionName, int port, String protocol) {
    public ParentListener {
        allowedKinds = List.copyOf(allowedKinds);
        hostnames = List.copyOf(hostnames);
    }
}
