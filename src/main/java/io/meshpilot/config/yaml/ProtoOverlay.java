package io.meshpilot.config.yaml;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import java.util.List;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Applies a document over a base message the way istiod applies a config file over its
 * defaults: exactly the fields the YAML names are taken from the document (so an explicit
 * {@code false} or {@code 0} wins, which a proto merge would drop), nested objects merge field
 * by field, lists replace, maps merge by key.
 */
public final class ProtoOverlay {
    private ProtoOverlay() {
    }

    /** Overlays {@code doc} (bound from {@code yaml}) onto {@code base}. */
    public static void apply(Message.Builder base, Message doc, Node yaml) {
        if (!(yaml instanceof MappingNode map)) {
            return;
        }
        Descriptor type = base.getDescriptorForType();
        for (NodeTuple t : map.getValue()) {
            if (!(t.getKeyNode() instanceof ScalarNode k)) {
                continue;
            }
            FieldDescriptor f = field(type, k.getValue());
            if (f == null) {
                continue; // the binder has rejected unknown fields already
            }
            Node value = t.getValueNode();
            if (ProtoYamlBinder.isNull(value)) {
                base.clearField(f);
            } else if (f.isMapField()) {
                for (Object entry : (List<?>) doc.getField(f)) {
                    base.addRepeatedField(f, entry); // later entries with the same key win
                }
            } else if (f.isRepeated()) {
                base.setField(f, doc.getField(f));
            } else if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE && !isWellKnown(f.getMessageType())
                    && value instanceof MappingNode) {
                Message.Builder nested = ((Message) base.getField(f)).toBuilder();
                apply(nested, (Message) doc.getField(f), value);
                base.setField(f, nested.build());
            } else {
                base.setField(f, doc.getField(f));
            }
        }
    }

    static FieldDescriptor field(Descriptor type, String key) {
        FieldDescriptor f = type.findFieldByName(key);
        if (f != null) {
            return f;
        }
        for (FieldDescriptor c : type.getFields()) {
            if (c.getJsonName().equals(key)) {
                return c;
            }
        }
        return null;
    }

    private static boolean isWellKnown(Descriptor d) {
        return d.getFile().getPackage().equals("google.protobuf");
    }
}
