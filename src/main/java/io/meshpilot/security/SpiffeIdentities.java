package io.meshpilot.security;

/** Reading Istio's workload identities, {@code spiffe://<trust-domain>/ns/<ns>/sa/<sa>}. */
public final class SpiffeIdentities {
    private SpiffeIdentities() {
    }

    /** The namespace of {@code identity}, or null when it is not of Istio's SPIFFE form. */
    public static String namespace(String identity) {
        String[] p = parts(identity);
        return p == null ? null : p[1];
    }

    /** The service account of {@code identity}, or null when it is not of Istio's SPIFFE form. */
    public static String serviceAccount(String identity) {
        String[] p = parts(identity);
        return p == null ? null : p[3];
    }

    /** {@code ns, <ns>, sa, <sa>} after the trust domain, or null. */
    private static String[] parts(String identity) {
        if (identity == null || !identity.startsWith("spiffe://")) {
            return null;
        }
        String rest = identity.substring("spiffe://".length());
        int slash = rest.indexOf('/');
        if (slash <= 0) {
            return null; // no trust domain
        }
        String[] p = rest.substring(slash + 1).split("/", -1);
        if (p.length != 4 || !p[0].equals("ns") || !p[2].equals("sa") || p[1].isEmpty() || p[3].isEmpty()) {
            return null;
        }
        return p;
    }
}
