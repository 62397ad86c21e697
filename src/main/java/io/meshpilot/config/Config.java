package io.meshpilot.config;

import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * One Istio config object: Kubernetes-style metadata plus its typed spec (an Istio API
 * message) and free-form status. Immutable; stores hand out and keep only these.
 *
 * @param gvk               type as written (any served version of the kind)
 * @param resourceVersion   opaque version for optimistic concurrency; empty before the first write
 * @param generation        bumped by the store on every spec change
 * @param creationTimestamp set by the store on create; null before
 */
public record Config(GroupVersionKind gvk, String name, String namespace, Map<String, String> labels,
                     Map<String, String> annotations, String resourceVersion, long generation,
                     Instant creationTimestamp, Message spec, Struct status) {

    public Config {
        Objects.requireNonNull(gvk, "gvk");
        Objects.requireNonNull(name, "name");
        namespace = namespace == null ? "" : namespace;
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
        resourceVersion = resourceVersion == null ? "" : resourceVersion;
        Objects.requireNonNull(spec, "spec");
        status = status == null ? Struct.getDefaultInstance() : status;
    }

    /** A new object (no resourceVersion, generation or creation time yet). */
    public static Config of(GroupVersionKind gvk, String namespace, String name, Message spec) {
        return new Config(gvk, name, namespace, Map.of(), Map.of(), "", 0, null, spec, null);
    }

    public ConfigKey key() {
        return new ConfigKey(gvk.kind(), namespace, name);
    }

    public Config withResourceVersion(String rv) {
        return new Config(gvk, name, namespace, labels, annotations, rv, generation, creationTimestamp, spec, status);
    }

    public Config withMeta(String rv, long gen, Instant created) {
        return new Config(gvk, name, namespace, labels, annotations, rv, gen, created, spec, status);
    }

    public Config withSpec(Message newSpec) {
        return new Config(gvk, name, namespace, labels, annotations, resourceVersion, generation, creationTimestamp,
                newSpec, status);
    }

    public Config withStatus(Struct newStatus) {
        return new Config(gvk, name, namespace, labels, annotations, resourceVersion, generation, creationTimestamp,
                spec, newStatus);
    }

    public Config withLabels(Map<String, String> newLabels) {
        return new Config(gvk, name, namespace, newLabels, annotations, resourceVersion, generation, creationTimestamp,
                spec, status);
    }

    public Config withAnnotations(Map<String, String> newAnnotations) {
        return new Config(gvk, name, namespace, labels, newAnnotations, resourceVersion, generation,
                creationTimestamp, spec, status);
    }
}
