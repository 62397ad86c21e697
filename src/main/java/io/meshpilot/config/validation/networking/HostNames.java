package io.meshpilot.config.validation.networking;

/** Host name relations with a leading wildcard ("*.example.com", "*"), as istiod's host.Name. */
public final class HostNames {
    private HostNames() {
    }

    public static boolean wildcarded(String h) {
        return h.startsWith("*");
    }

    /** Whether the two hosts overlap: equal, or one wildcard covers the other. */
    public static boolean matches(String a, String b) {
        boolean aw = wildcarded(a);
        boolean bw = wildcarded(b);
        if (aw && bw) {
            return a.length() < b.length() ? b.substring(1).endsWith(a.substring(1)) : a.substring(1).endsWith(b.substring(1));
        }
        if (aw) {
            return b.endsWith(a.substring(1));
        }
        if (bw) {
            return a.endsWith(b.substring(1));
        }
        return a.equals(b);
    }

    /** Whether every name {@code h} covers is covered by {@code of}. */
    public static boolean subsetOf(String h, String of) {
        if (wildcarded(h)) {
            return wildcarded(of) && h.substring(1).endsWith(of.substring(1));
        }
        if (wildcarded(of)) {
            return h.endsWith(of.substring(1));
        }
        return h.equals(of);
    }
}
