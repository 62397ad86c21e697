package io.meshpilot.networking.envoyfilter;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Duration;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.meshpilot.model.EnvoyPatchValues;
import java.util.List;
import java.util.Map;

/**
 * istiod's proto merge for EnvoyFilter MERGE (its pkg/proto/merge): protobuf's merge (set
 * fields overwrite, lists append, map entries replace, messages merge field by field) except
 * that a {@code Duration} is replaced whole, so {@code connect_timeout: 0.5s} merged into 10s
 * is 0.5s, not 10.5s. An {@code Any} merges as a message too, so its type and bytes are
 * replaced; the merge of two typed configs' contents is {@link #mergeAny}.
 */
final class ProtoMerge {
    private ProtoMerge() {
    }

    /** {@code src} merged into {@code dst}; both of one type. */
    static <M extends Message> M merge(M dst, Message src) {
        if (!dst.getDescriptorForType().getFullName().equals(src.getDescriptorForType().getFullName())) {
            throw new IllegalArgumentException("cannot merge " + src.getDescriptorForType().getFullName()
                    + " into " + dst.getDescriptorForType().getFullName());
        }
        Message.Builder b = dst.toBuilder();
        mergeInto(b, src);
        @SuppressWarnings("unchecked")
        M out = (M) b.build();
        return out;
    }

    private static void mergeInto(Message.Builder dst, Message src) {
        for (Map.Entry<FieldDescriptor, Object> e : src.getAllFields().entrySet()) {
            FieldDescriptor fd = e.getKey();
            if (fd.isRepeated()) {
                // lists append and map entries replace: protobuf's own merge of that field alone
                Message.Builder only = src.newBuilderForType();
                for (Object v : (List<?>) e.getValue()) {
                    only.addRepeatedField(fd, v);
                }
                dst.mergeFrom(only.build());
            } else if (fd.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                Message v = (Message) e.getValue();
                if (v.getDescriptorForType().equals(Duration.getDescriptor()) || !dst.hasField(fd)) {
                    dst.setField(fd, v);
                } else {
                    Message.Builder inner = ((Message) dst.getField(fd)).toBuilder();
                    mergeInto(inner, v);
                    dst.setField(fd, inner.build());
                }
            } else {
                dst.setField(fd, e.getValue());
            }
        }
    }

    /**
     * istiod's MergeAnyWithAny: the message in {@code src} merged into the one in {@code dst},
     * packed again. Both must be of one type this build knows.
     *
     * @throws IllegalArgumentException when the types differ or are unknown
     */
    static Any mergeAny(Any dst, Any src) {
        Message d = unpack(dst);
        Message s = unpack(src);
        return Any.pack(merge(d, s));
    }

    static Message unpack(Any any) {
        String name = any.getTypeUrl().substring(any.getTypeUrl().lastIndexOf('/') + 1);
        Descriptor descriptor = EnvoyPatchValues.descriptor(name)
                .orElseThrow(() -> new IllegalArgumentException("unknown type " + any.getTypeUrl()));
        try {
            return DynamicMessage.parseFrom(descriptor, any.getValue()).toBuilder().build();
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("cannot read " + any.getTypeUrl() + ": " + e.getMessage(), e);
        }
    }
}
