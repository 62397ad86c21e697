package io.meshpilot.config;

/**
 * A Kubernetes-style type name: {@code networking.istio.io/v1 VirtualService}. The version
 * is the one a document was written in; every served version of a kind maps to one schema.
 */
public record GroupVersionKind(String group, String version, String kind) {

    /** From a document's {@code apiVersion} ("group/version", or "v1" for the core group) and kind. */
    public static GroupVersionKind of(String apiVersion, String kind) {
        int slash = apiVersion.indexOf('/');
        return slash < 0 ? new GroupVersionKind("", apiVersion, kind)
                : new GroupVersionKind(apiVersion.substring(0, slash), apiVersion.substring(slash + 1), kind);
    }

    public String apiVersion() {
        return group.isEmpty() ? version : group + "/" + version;
    }

    @Override
    public String toString() {
        return apiVersion() + " " + kind;
    }
}
