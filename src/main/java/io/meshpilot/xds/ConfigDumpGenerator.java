package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.admin.v3.ConfigDump;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.util.PrintableText;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * istiod's xDS debug type {@code istio.io/debug/config_dump} (statusgen.go, what
 * {@code istioctl proxy-status <pod>} asks): the one resource name names a proxy as
 * {@code /debug/config_dump?proxyID=} does (the first connection whose id contains it, so
 * {@code <pod>.<namespace>} is enough), and the answer is that proxy's config dump without
 * endpoints, its configs as unnamed resources in istiod's order (bootstrap, clusters,
 * listeners, scoped routes, routes, secrets, extension configs). No name, several names, or a
 * proxy not connected here (or not of the caller's namespace) answer empty, as istiod.
 */
final class ConfigDumpGenerator implements Generator {
    private static final System.Logger LOG = System.getLogger(ConfigDumpGenerator.class.getName());

    private final Function<String, Optional<Connection>> connectionNamed;
    private final Function<Connection, ConfigDump> dump;
    private final Predicate<Connection> readable;

    /**
     * @param connectionNamed the connection a debug request's proxy id names
     * @param dump            a connection's config dump without endpoints
     */
    ConfigDumpGenerator(Function<String, Optional<Connection>> connectionNamed, Function<Connection, ConfigDump> dump) {
        this(connectionNamed, dump, c -> true);
    }

    private ConfigDumpGenerator(Function<String, Optional<Connection>> connectionNamed,
                                Function<Connection, ConfigDump> dump, Predicate<Connection> readable) {
        this.connectionNamed = connectionNamed;
        this.dump = dump;
        this.readable = readable;
    }

    /** Dumps only the proxies of {@code namespace} (what a workload namespace may read). */
    ConfigDumpGenerator ofNamespace(String namespace) {
        return new ConfigDumpGenerator(connectionNamed, dump, c -> c.proxy().namespace().equals(namespace));
    }

    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        if (names.size() != 1) {
            LOG.log(Level.INFO, "istio.io/debug/config_dump answered empty proxy=" + proxy.id()
                    + ": expected exactly one proxy id, got " + names.size());
            return List.of();
        }
        String proxyId = names.iterator().next();
        return connectionNamed.apply(proxyId).filter(readable)
                .map(c -> dump.apply(c).getConfigsList())
                .orElseGet(() -> {
                    LOG.log(Level.INFO, "istio.io/debug/config_dump answered empty proxy=" + proxy.id()
                            + ": no proxy " + PrintableText.clip(proxyId, 256) + " connected here");
                    return List.of();
                });
    }
}
