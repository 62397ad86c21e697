package io.meshpilot.features;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The environment as start-up reads it, remembering every name asked for. istiod's chart and
 * operators set variables that istiod defines and MeshPilot does not implement
 * ({@code UNSAFE_ENABLE_ADMIN_ENDPOINTS}, {@code PILOT_JWT_ENABLE_REMOTE_JWKS}, ...); once the flags and
 * features are read, {@link #unsupported()} names the ones that are set but were never asked
 * for, so that start-up can say so instead of ignoring them without a word. A variable istiod
 * does not define is nobody's business here and stays silent.
 */
public final class EnvironmentUsage implements Function<String, String> {
    private static final String ISTIOD_NAMES = "istiod-environment.txt";

    private final Function<String, String> env;
    private final Set<String> istiodNames;
    private final Set<String> read = ConcurrentHashMap.newKeySet();

    public EnvironmentUsage(Function<String, String> env, Set<String> istiodNames) {
        this.env = env;
        this.istiodNames = Set.copyOf(istiodNames);
    }

    /** Over istiod's own list of variables (pilot-discovery's env.Register names). */
    public static EnvironmentUsage ofIstiod(Function<String, String> env) {
        return new EnvironmentUsage(env, bundledIstiodNames());
    }

    @Override
    public String apply(String name) {
        read.add(name);
        return env.apply(name);
    }

    /**
     * A variable istiod defines, set in this environment, that nothing read.
     *
     * @param name  the variable
     * @param value its value as set
     */
    public record Unsupported(String name, String value) {
        @Override
        public String toString() {
            return name + "=" + value;
        }
    }

    /** The set but unread istiod variables, by name. */
    public List<Unsupported> unsupported() {
        List<Unsupported> out = new ArrayList<>();
        for (String name : new TreeSet<>(istiodNames)) {
            if (read.contains(name)) {
                continue;
            }
            String value = env.apply(name);
            if (value != null) {
                out.add(new Unsupported(name, value));
            }
        }
        return out;
    }

    /** The start-up line for {@link #unsupported()}, or null when there is nothing to say. */
    public String unsupportedWarning() {
        List<Unsupported> u = unsupported();
        if (u.isEmpty()) {
            return null;
        }
        return "istiod environment variables not supported by MeshPilot, ignored: "
                + String.join(", ", u.stream().map(Unsupported::toString).toList());
    }

    /** The istiod names this usage knows. */
    public Set<String> istiodNames() {
        return istiodNames;
    }

    /** The names in the bundled list (comments and blank lines skipped). */
    static Set<String> bundledIstiodNames() {
        Set<String> names = new TreeSet<>();
        try (InputStream in = EnvironmentUsage.class.getResourceAsStream(ISTIOD_NAMES)) {
            if (in == null) {
                throw new IllegalStateException(ISTIOD_NAMES + " is missing from the jar");
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line; (line = r.readLine()) != null; ) {
                String t = line.strip();
                if (!t.isEmpty() && !t.startsWith("#")) {
                    names.add(t);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return names;
    }
}
