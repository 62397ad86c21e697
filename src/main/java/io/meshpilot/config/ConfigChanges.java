package io.meshpilot.config;


/**
 * Which config changes need a push (istiod's needsPush): adds and deletes always; an update
 * only when the spec changed, or when Istio-owned labels/annotations ({@code *istio.io*})
 * are involved. A metadata- or status-only update of anything else pushes nothing.
 */
public final class ConfigChanges {
    private ConfigChanges() {
    }

    public static boolean needsPush(ConfigEvent event) {
        if (event.type() != ConfigEvent.Type.UPDATE || event.old() == null) {
            return true;
        }
        return needsPush(event.old(), event.current());
    }

    public static boolean needsPush(Config prev, Config curr) {
        if (!prev.gvk().kind().equals(curr.gvk().kind()) || !prev.gvk().group().equals(curr.gvk().group())) {
            return true;
        }
        if (istioOwned(prev) || istioOwned(curr)) {
            if (!prev.labels().equals(curr.labels()) || !prev.annotations().equals(curr.annotations())) {
                return true;
            }
        }
        return !prev.spec().equals(curr.spec());
    }

    private static boolean istioOwned(Config c) {
        return c.labels().keySet().stream().anyMatch(k -> k.contains("istio.io"))
                || c.annotations().keySet().stream().anyMatch(k -> k.contains("istio.io"));
    }
}
