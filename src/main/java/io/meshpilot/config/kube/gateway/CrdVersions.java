package io.meshpilot.config.kube.gateway;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.meshpilot.config.kube.gateway.GatewayApiKinds.Resource;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which Gateway API kind a CustomResourceDefinition defines, and whether it is read: its CRD
 * must serve the version istiod reads and, for the kinds with a minimum, carry a
 * {@code gateway.networking.k8s.io/bundle-version} at least that minimum (istiod's
 * minimumVersionFilter in pkg/kube/kclient/crdwatcher.go: a pre-release is rounded up to its
 * release, {@code v1.6.0-rc.1} counts as 1.6.0). A refusal carries istiod's log message.
 */
public final class CrdVersions {
    static final String BUNDLE_VERSION = "gateway.networking.k8s.io/bundle-version";
    private static final Pattern SEMVER = Pattern.compile("v?(\\d+)(?:\\.(\\d+))?(?:\\.(\\d+))?(?:-[0-9A-Za-z.-]+)?(?:\\+.*)?");

    private CrdVersions() {
    }

    /**
     * What to do with one CRD.
     *
     * @param resource the Gateway API kind it defines
     * @param refusal  empty when the kind is read; else why not, as the log line says it
     */
    public record Decision(Resource resource, String refusal) {
        public boolean watched() {
            return refusal.isEmpty();
        }
    }

    /** The decision for {@code crd} (a whole CustomResourceDefinition object); empty when it is not a kind istiod reads. */
    public static Optional<Decision> decide(JsonObject crd) {
        JsonObject meta = GatewayApiObject.object(crd, "metadata");
        JsonObject spec = GatewayApiObject.object(crd, "spec");
        String group = GatewayApiObject.string(spec, "group");
        String plural = GatewayApiObject.string(GatewayApiObject.object(spec, "names"), "plural");
        Optional<Resource> resource = GatewayApiKinds.RESOURCES.stream()
                .filter(r -> r.group().equals(group) && r.plural().equals(plural)).findFirst();
        if (resource.isEmpty()) {
            return Optional.empty();
        }
        Resource r = resource.get();
        String crdName = r.crdName();
        if (!r.minimumBundleVersion().isEmpty()) {
            String bundle = GatewayApiObject.string(GatewayApiObject.object(meta, "annotations"), BUNDLE_VERSION);
            if (bundle.isEmpty()) {
                return Optional.of(new Decision(r, "CRD " + crdName + " expected to have a bundle-version annotation, "
                        + "but none found; ignoring"));
            }
            Optional<int[]> have = parse(bundle);
            if (have.isEmpty()) {
                return Optional.of(new Decision(r, "CRD " + crdName + " version " + bundle + " invalid; ignoring"));
            }
            int[] min = parse(r.minimumBundleVersion()).orElseThrow();
            if (compare(have.get(), min) < 0) {
                return Optional.of(new Decision(r, "CRD " + crdName + " version " + print(have.get())
                        + " is below minimum version " + r.minimumBundleVersion() + " required by this Istio version; "
                        + "resources of this kind will not be processed. Upgrade the Gateway API CRDs to satisfy the "
                        + "minimum version."));
            }
        }
        if (!serves(spec, r.version())) {
            return Optional.of(new Decision(r, "CRD " + crdName + " does not serve " + r.version() + ", the version "
                    + "MeshPilot reads " + r.kind() + " at; ignoring"));
        }
        return Optional.of(new Decision(r, ""));
    }

    private static boolean serves(JsonObject spec, String version) {
        JsonElement versions = spec.get("versions");
        if (versions == null || !versions.isJsonArray()) {
            return false;
        }
        for (JsonElement v : versions.getAsJsonArray()) {
            if (v.isJsonObject() && version.equals(GatewayApiObject.string(v.getAsJsonObject(), "name"))
                    && !"false".equals(GatewayApiObject.string(v.getAsJsonObject(), "served"))) {
                return true;
            }
        }
        return false;
    }

    /** major, minor, patch of a semantic version, the pre-release dropped (istiod's SetPrerelease("")). */
    static Optional<int[]> parse(String version) {
        Matcher m = SEMVER.matcher(version.trim());
        if (!m.matches()) {
            return Optional.empty();
        }
        try {
            return Optional.of(new int[] {Integer.parseInt(m.group(1)), m.group(2) == null ? 0 : Integer.parseInt(m.group(2)),
                    m.group(3) == null ? 0 : Integer.parseInt(m.group(3))});
        } catch (NumberFormatException e) {
            return Optional.empty(); // more digits than an int holds
        }
    }

    private static int compare(int[] a, int[] b) {
        for (int i = 0; i < 3; i++) {
            if (a[i] != b[i]) {
                return Integer.compare(a[i], b[i]);
            }
        }
        return 0;
    }

    private static String print(int[] v) {
        return v[0] + "." + v[1] + "." + v[2];
    }
}
