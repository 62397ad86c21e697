package io.meshpilot.model;

/** How clients reach a service's endpoints (istiod's model.Resolution). */
public enum Resolution {
    /** Endpoints known to the mesh; the proxy load-balances (STATIC, Kubernetes). */
    CLIENT_SIDE_LB,
    /** DNS name resolved by the proxy, all addresses used (ServiceEntry DNS). */
    DNS_LB,
    /** DNS name resolved, one address at a time (ServiceEntry DNS_ROUND_ROBIN). */
    DNS_ROUND_ROBIN_LB,
    /** Forward to the original destination (ServiceEntry NONE). */
    PASSTHROUGH,
    /** DNS resolved per request (ServiceEntry DYNAMIC_DNS). */
    DYNAMIC_DNS
}
