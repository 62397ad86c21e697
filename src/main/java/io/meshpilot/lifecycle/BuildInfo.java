package io.meshpilot.lifecycle;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * What was built: version, git revision, build time, and the Java it runs on. Filled by the
 * Maven build into {@code META-INF/meshpilot/build.properties}; fields read "unknown" when
 * run from an unfiltered build, as istiod does without its ldflags.
 *
 * @param status "Clean" or "Modified" (uncommitted changes at build time), as istiod
 */
public record BuildInfo(String version, String revision, String buildTime, String status, String tag,
                        String javaVersion) {

    private static final BuildInfo CURRENT = load();

    public static BuildInfo current() {
        return CURRENT;
    }

    private static BuildInfo load() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream("/META-INF/meshpilot/build.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // fall through to "unknown": version output must never stop the server
        }
        String dirty = value(p, "git.dirty");
        String status = switch (dirty) {
            case "true" -> "Modified";
            case "false" -> "Clean";
            default -> "unknown";
        };
        String tag = value(p, "git.tag");
        return new BuildInfo(value(p, "version"), value(p, "git.revision"), value(p, "build.time"), status,
                tag.isEmpty() ? "unknown" : tag, Runtime.version().toString());
    }

    private static String value(Properties p, String key) {
        String v = p.getProperty(key, "unknown").trim();
        // an unfiltered placeholder (e.g. run from an IDE) counts as unknown
        return v.startsWith("${") ? "unknown" : v;
    }

    /** istiod's {@code /version} text form: version-revision-status. */
    public String shortForm() {
        return version + "-" + revision + "-" + status;
    }

    /**
     * istiod's BuildInfo JSON keys (pkg/version {@code BuildInfo}: version, revision,
     * golang_version, status, tag), with the Java version as {@code golang_version}: what the
     * control-plane identifier istioctl reads and ControlZ's {@code /versionj} carry.
     */
    public Map<String, String> istiodInfo() {
        var m = new LinkedHashMap<String, String>();
        m.put("version", version);
        m.put("revision", revision);
        m.put("golang_version", javaVersion);
        m.put("status", status);
        m.put("tag", tag);
        return m;
    }

    /** The JSON object of {@code /version} and {@code version -o json} (istiod's keys plus ours). */
    public Map<String, String> asMap() {
        var m = new LinkedHashMap<String, String>();
        istiodInfo().forEach((key, value) -> m.put(key.equals("golang_version") ? "java_version" : key, value));
        m.put("build_time", buildTime);
        return m;
    }
}
