package io.meshpilot.config.schema;

import io.meshpilot.config.GroupVersionKind;
import com.google.protobuf.Message;
import io.meshpilot.config.validation.Validator;
import java.util.List;

/**
 * One Pilot config kind: its group, served versions (first is preferred), plural, scope,
 * spec message type and istiod's validation.
 */
public record Schema(String group, String kind, String plural, List<String> versions, boolean clusterScoped,
                     Message defaultSpec, Validator validator) {

    public Schema {
        versions = List.copyOf(versions);
    }

    /** The preferred (first) version's GVK: how this kind is listed and stored. */
    public GroupVersionKind gvk() {
        return new GroupVersionKind(group, versions.get(0), kind);
    }

    public boolean serves(String version) {
        return versions.contains(version);
    }
}
