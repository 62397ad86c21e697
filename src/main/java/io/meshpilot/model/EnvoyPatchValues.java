package io.meshpilot.model;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import com.google.protobuf.TypeRegistry;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilter;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.ApplyTo;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An EnvoyFilter patch value (a protobuf Struct of Envoy JSON) as the typed Envoy message its
 * applyTo patches, as istiod's xds.BuildXDSObjectFromStruct converts it: through JSON, unknown
 * fields left out (a value written for another Envoy version still applies). Every
 * {@code @type} in the value must name an Envoy, xDS/udpa or protobuf message this build has;
 * its descriptor is found by the message's Java class (Envoy's java_package rule), so any type
 * of the Envoy API is known without listing them.
 */
public final class EnvoyPatchValues {
    private static final String TYPE_PREFIX = "type.googleapis.com/";
    private static final Map<String, Optional<Descriptor>> DESCRIPTORS = new ConcurrentHashMap<>();

    private EnvoyPatchValues() {
    }

    /** The Envoy message {@code applyTo} patches, empty for none this build can patch (BOOTSTRAP). */
    public static Optional<Message.Builder> target(ApplyTo applyTo) {
        return Optional.ofNullable(switch (applyTo) {
            case CLUSTER -> Cluster.newBuilder();
            case LISTENER -> Listener.newBuilder();
            case ROUTE_CONFIGURATION -> RouteConfiguration.newBuilder();
            case FILTER_CHAIN -> FilterChain.newBuilder();
            case HTTP_FILTER ->
                    HttpFilter.newBuilder();
            case NETWORK_FILTER -> Filter.newBuilder();
            case VIRTUAL_HOST -> VirtualHost.newBuilder();
            case HTTP_ROUTE -> Route.newBuilder();
            case EXTENSION_CONFIG -> TypedExtensionConfig.newBuilder();
            case LISTENER_FILTER -> ListenerFilter.newBuilder();
            default -> null;
        });
    }

    /**
     * Converts {@code value} to {@code applyTo}'s message.
     *
     * @throws IllegalArgumentException naming the cause: an unknown {@code @type}, a value of the
     *                                  wrong JSON type for a field, a malformed duration ...
     */
    public static Message convert(ApplyTo applyTo, Struct value) {
        Message.Builder builder = target(applyTo).orElseThrow(
                () -> new IllegalArgumentException("applyTo " + applyTo + " has no Envoy object to patch"));
        TypeRegistry.Builder types = TypeRegistry.newBuilder();
        for (String url : typeUrls(value)) {
            String name = url.substring(url.lastIndexOf('/') + 1);
            Descriptor d = descriptor(name).orElseThrow(
                    () -> new IllegalArgumentException("unknown @type " + url + ": no such Envoy message"));
            types.add(d);
        }
        try {
            String json = JsonFormat.printer().print(value);
            JsonFormat.parser().ignoringUnknownFields().usingTypeRegistry(types.build()).merge(json, builder);
            return builder.build();
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            throw new IllegalArgumentException("not a valid " + builder.getDescriptorForType().getFullName() + ": "
                    + e.getMessage(), e);
        }
    }

    /** The descriptor of the message {@code fullName} (as in a type URL), if this build has it. */
    public static Optional<Descriptor> descriptor(String fullName) {
        return DESCRIPTORS.computeIfAbsent(fullName, EnvoyPatchValues::load);
    }

    private static Optional<Descriptor> load(String fullName) {
        String javaName = javaName(fullName);
        if (javaName == null) {
            return Optional.empty();
        }
        // a nested message is Outer$Inner: try the dots from the right as class separators
        String candidate = javaName;
        for (int i = 0; i < 4 && candidate != null; i++) {
            try {
                Class<?> c = Class.forName(candidate, false, EnvoyPatchValues.class.getClassLoader());
                if (Message.class.isAssignableFrom(c)) {
                    Descriptor d = (Descriptor) c.getMethod("getDescriptor").invoke(null);
                    return d.getFullName().equals(fullName) ? Optional.of(d) : Optional.empty();
                }
                return Optional.empty();
            } catch (ClassNotFoundException e) {
                int dot = candidate.lastIndexOf('.');
                candidate = dot < 0 ? null : candidate.substring(0, dot) + "$" + candidate.substring(dot + 1);
            } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** The Java class of a proto message by the java_package options of Envoy's, xDS's, udpa's and protobuf's files. */
    private static String javaName(String fullName) {
        if (fullName.startsWith("envoy.")) {
            return "io.envoyproxy." + fullName;
        }
        if (fullName.startsWith("xds.")) {
            return "com.github." + fullName;
        }
        if (fullName.startsWith("udpa.")) {
            return "com.github.udpa." + fullName;
        }
        if (fullName.startsWith("google.protobuf.")) {
            return "com.google.protobuf." + fullName.substring("google.protobuf.".length());
        }
        return null;
    }

    private static Set<String> typeUrls(Struct value) {
        Set<String> out = new LinkedHashSet<>();
        collect(value, out);
        return out;
    }

    private static void collect(Struct s, Set<String> out) {
        s.getFieldsMap().forEach((k, v) -> {
            if (k.equals("@type") && v.hasStringValue()) {
                String url = v.getStringValue();
                if (!url.contains("/")) {
                    url = TYPE_PREFIX + url;
                }
                out.add(url);
            } else {
                collect(v, out);
            }
        });
    }

    private static void collect(Value v, Set<String> out) {
        if (v.hasStructValue()) {
            collect(v.getStructValue(), out);
        } else if (v.hasListValue()) {
            v.getListValue().getValuesList().forEach(e -> collect(e, out));
        }
    }
}
