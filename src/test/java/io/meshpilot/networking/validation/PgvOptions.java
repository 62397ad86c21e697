package io.meshpilot.networking.validation;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.FieldOptions;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.OneofOptions;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.ExtensionRegistry;
import com.google.protobuf.GeneratedMessage;
import com.google.protobuf.GeneratedMessage.GeneratedExtension;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.pgv.validate.Validate;
import io.envoyproxy.pgv.validate.Validate.FieldRules;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * protoc-gen-validate's options on a descriptor. The Envoy API jar ships PGV's generated
 * {@code Validate} class and its generated files register the extension, so options normally
 * come typed; a descriptor built without that registration (parsed from a FileDescriptorSet,
 * say) keeps them as unknown fields, which we re-parse with a registry that knows them.
 * Results are cached per descriptor: descriptors are immutable and live as long as their class.
 */
final class PgvOptions {
    private static final ExtensionRegistry REGISTRY = ExtensionRegistry.newInstance();
    private static final Map<FieldDescriptor, FieldRules> FIELD = new ConcurrentHashMap<>();
    private static final Map<OneofDescriptor, Boolean> ONEOF = new ConcurrentHashMap<>();
    private static final Map<Descriptor, Boolean> MESSAGE = new ConcurrentHashMap<>();

    static {
        Validate.registerAllExtensions(REGISTRY);
    }

    private PgvOptions() {
    }

    /** The field's {@code (validate.rules)}, or the default instance when it has none. */
    static FieldRules rules(FieldDescriptor f) {
        return FIELD.computeIfAbsent(f, k -> rules(k.getOptions()));
    }

    /** The rules in field options, typed or (unregistered extension) still in unknown fields. */
    static FieldRules rules(FieldOptions options) {
        return extension(options, Validate.rules, FieldOptions::parseFrom);
    }

    /** {@code (validate.required)} on a oneof: exactly one member must be set. */
    static boolean required(OneofDescriptor o) {
        return ONEOF.computeIfAbsent(o, k -> extension(k.getOptions(), Validate.required, OneofOptions::parseFrom));
    }

    /** {@code (validate.disabled)} or {@code (validate.ignored)}: PGV generates no checks for the message. */
    static boolean disabled(Descriptor d) {
        return MESSAGE.computeIfAbsent(d, k -> extension(k.getOptions(), Validate.disabled, MessageOptions::parseFrom)
                || extension(k.getOptions(), Validate.ignored, MessageOptions::parseFrom));
    }

    interface Parser<O> {
        O parse(ByteString bytes, ExtensionRegistry registry) throws InvalidProtocolBufferException;
    }

    private static <O extends GeneratedMessage.ExtendableMessage<O>, T> T extension(
            O options, GeneratedExtension<O, T> ext, Parser<O> parser) {
        if (options.hasExtension(ext) || !options.getUnknownFields().hasField(ext.getNumber())) {
            return options.getExtension(ext);
        }
        try {
            return parser.parse(options.toByteString(), REGISTRY).getExtension(ext);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("unreadable options " + options, e);
        }
    }
}
