package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.config.kube.gateway.ParentKey;
import io.meshpilot.config.validation.networking.HostNames;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One listener a route's parentRef matched (istiod's routeParentReference): the route attaches
 * to it unless {@code denied}.
 *
 * @param internalName      the generated Istio Gateway ({@code namespace/name}) or {@code mesh}
 * @param listenerHostname  the listener's hostname as written, empty for none
 * @param denied            why the route may not attach here; null when it may
 * @param original          the parentRef as written in the route
 * @param bannedHostnames   hostnames of the other listeners on the same port and protocol (isolation)
 * @param parent            the Gateway, ListenerSet or Service the parentRef names
 * @param sectionName       the listener's name
 * @param meshHosts         for a mesh parent, the hosts its VirtualServices are for: the Service's
 *                          FQDN, or the ServiceEntry's hosts; empty for a listener
 */
record RouteParentRef(String internalName, String listenerHostname, ParentError denied, JsonObject original,
                      Set<String> bannedHostnames, ParentKey parent, String sectionName, List<String> meshHosts) {
    static final String MESH = "mesh";

    RouteParentRef {
        bannedHostnames = Set.copyOf(bannedHostnames);
        meshHosts = List.copyOf(meshHosts);
    }

    boolean mesh() {
        return internalName.equals(MESH);
    }

    boolean accepted() {
        return denied == null;
    }

    /** The parentRef's port, when it names one. */
    Optional<Integer> port() {
        return JsonFields.optionalInteger(original, "port");
    }

    /**
     * Whether a route host on a wildcard listener is left to this listener: not when another
     * listener on the same port and protocol has a more specific hostname that covers it
     * (istiod's hostnameAllowedByIsolation; the Gateway API's listener isolation).
     */
    boolean hostnameAllowedByIsolation(String routeHost) {
        if (!listenerHostname.isEmpty() && !HostNames.wildcarded(listenerHostname)) {
            return true;
        }
        if (!listenerHostname.isEmpty() && !HostNames.matches(routeHost, listenerHostname)) {
            return false;
        }
        for (String other : bannedHostnames) {
            if (listenerHostname.length() > other.length()) {
                continue;
            }
            if (HostNames.subsetOf(routeHost, other)) {
                return false;
            }
        }
        return true;
    }
}
