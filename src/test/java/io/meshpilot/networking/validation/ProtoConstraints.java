package io.meshpilot.networking.validation;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.TypeRegistry;
import io.envoyproxy.pgv.validate.Validate.FieldRules;
import io.envoyproxy.pgv.validate.Validate.RepeatedRules;
import io.meshpilot.networking.EnvoyTypes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Envoy's own first check of a resource, in Java: the protoc-gen-validate rules its .proto
 * files declare ({@code (validate.rules)}, {@code (validate.required)} oneofs, disabled
 * messages), which Envoy evaluates on every xDS resource and on every typed config it
 * unpacks. A NACK tells us the same thing hours later on a live proxy; this tells a test.
 *
 * <p>Walks any message recursively, through {@code google.protobuf.Any} for the types the
 * registry knows (Envoy validates a typed config when it builds the extension). Each rule
 * evaluated or skipped (one we cannot evaluate faithfully, like timestamps or e-mail
 * addresses) is counted, so a test can show what the check covers.
 *
 * <p>Collects over several resources: {@code new ProtoConstraints().check(p1, m1).check(p2, m2).result()}.
 * Not thread-safe.
 */
public final class ProtoConstraints {
    /** How many times each rule ran ({@code string.min_len}), was skipped, and the Any types we could not open. */
    public record Coverage(Map<String, Long> evaluated, Map<String, Long> skipped, Set<String> unresolvedTypes) {
    }

    public record Result(List<Violation> violations, Coverage coverage) {
    }

    private final TypeRegistry types;
    private final List<Violation> violations = new ArrayList<>();
    private final Map<String, Long> evaluated = new TreeMap<>();
    private final Map<String, Long> skipped = new TreeMap<>();
    private final Set<String> unresolved = new TreeSet<>();

    public ProtoConstraints() {
        this(EnvoyTypes.REGISTRY);
    }

    /** @param types the message types an {@code Any} may carry; others are counted as unresolved */
    public ProtoConstraints(TypeRegistry types) {
        this.types = types;
    }

    /** The violations of one message, its path prefix {@code path} ({@code clusters[x]}). */
    public static List<Violation> violations(String path, MessageOrBuilder m) {
        return new ProtoConstraints().check(path, m).result().violations();
    }

    public ProtoConstraints check(String path, MessageOrBuilder m) {
        message(path, m);
        return this;
    }

    public Result result() {
        return new Result(List.copyOf(violations),
                new Coverage(Map.copyOf(evaluated), Map.copyOf(skipped), Set.copyOf(unresolved)));
    }

    void violation(String path, String message) {
        violations.add(new Violation(path, message));
    }

    void evaluated(String rule) {
        evaluated.merge(rule, 1L, Long::sum);
    }

    void skipped(String rule) {
        skipped.merge(rule, 1L, Long::sum);
    }

    private void message(String path, MessageOrBuilder m) {
        Descriptor d = m.getDescriptorForType();
        if (d.getFullName().equals("google.protobuf.Any")) {
            any(path, m);
            return;
        }
        if (PgvOptions.disabled(d)) {
            skipped("message.disabled");
            return; // PGV generates nothing for it, nested messages included
        }
        for (OneofDescriptor o : d.getRealOneofs()) {
            if (PgvOptions.required(o)) {
                evaluated("oneof.required");
                if (!m.hasOneof(o)) {
                    violation(join(path, o.getName()), "oneof.required");
                }
            }
        }
        for (FieldDescriptor f : d.getFields()) {
            field(join(path, f.getName()), m, f);
        }
    }

    private void field(String path, MessageOrBuilder m, FieldDescriptor f) {
        FieldRules r = PgvOptions.rules(f);
        if (f.isMapField()) {
            map(path, m, f, r);
        } else if (f.isRepeated()) {
            repeated(path, m, f, r);
        } else if (f.hasPresence() && !m.hasField(f)) {
            // Unset message, oneof member or proto3 optional: only "required" applies.
            // Plain proto3 scalars have no presence and are checked at their default value, as PGV does.
            if (f.getRealContainingOneof() == null) {
                required(path, r);
            }
        } else {
            value(path, f, r, m.getField(f));
        }
    }

    private void required(String path, FieldRules r) {
        String rule = switch (r.getTypeCase()) {
            case DURATION -> r.getDuration().getRequired() ? "duration.required" : null;
            case ANY -> r.getAny().getRequired() ? "any.required" : null;
            case TIMESTAMP -> r.getTimestamp().getRequired() ? "timestamp.required" : null;
            default -> null;
        };
        if (rule == null && r.getMessage().getRequired()) {
            rule = "message.required";
        }
        if (rule != null) {
            evaluated(rule);
            violation(path, rule);
        }
    }

    /** One value (a singular field, a list item, a map key or value): its rules, then its own fields. */
    private void value(String path, FieldDescriptor f, FieldRules r, Object v) {
        if (r.getTypeCase() != FieldRules.TypeCase.TYPE_NOT_SET) {
            ValueRules.check(this, path, f, r, v);
        }
        if (v instanceof MessageOrBuilder msg) {
            if (r.getMessage().getSkip()) {
                evaluated("message.skip");
                return;
            }
            message(path, msg);
        }
    }

    private void repeated(String path, MessageOrBuilder m, FieldDescriptor f, FieldRules r) {
        List<?> items = (List<?>) m.getField(f);
        RepeatedRules rr = r.getRepeated();
        if (r.hasRepeated() && !(rr.getIgnoreEmpty() && items.isEmpty())) {
            if (rr.hasMinItems()) {
                evaluated("repeated.min_items");
                if (items.size() < rr.getMinItems()) {
                    violation(path, "repeated.min_items " + rr.getMinItems() + " (got " + items.size() + ")");
                }
            }
            if (rr.hasMaxItems()) {
                evaluated("repeated.max_items");
                if (items.size() > rr.getMaxItems()) {
                    violation(path, "repeated.max_items " + rr.getMaxItems() + " (got " + items.size() + ")");
                }
            }
            if (rr.getUnique()) {
                evaluated("repeated.unique");
                Set<Object> seen = new HashSet<>();
                for (Object item : items) {
                    if (!seen.add(item)) {
                        violation(path, "repeated.unique (" + item + " repeats)");
                        break;
                    }
                }
            }
        }
        FieldRules itemRules = rr.getItems();
        for (int i = 0; i < items.size(); i++) {
            value(path + "[" + i + "]", f, itemRules, items.get(i));
        }
    }

    private void map(String path, MessageOrBuilder m, FieldDescriptor f, FieldRules r) {
        List<?> entries = (List<?>) m.getField(f);
        var mr = r.getMap();
        if (r.hasMap() && !(mr.getIgnoreEmpty() && entries.isEmpty())) {
            if (mr.hasMinPairs()) {
                evaluated("map.min_pairs");
                if (entries.size() < mr.getMinPairs()) {
                    violation(path, "map.min_pairs " + mr.getMinPairs() + " (got " + entries.size() + ")");
                }
            }
            if (mr.hasMaxPairs()) {
                evaluated("map.max_pairs");
                if (entries.size() > mr.getMaxPairs()) {
                    violation(path, "map.max_pairs " + mr.getMaxPairs() + " (got " + entries.size() + ")");
                }
            }
            if (mr.getNoSparse()) {
                evaluated("map.no_sparse"); // Java map values are never unset: always holds
            }
        }
        FieldDescriptor keyField = f.getMessageType().findFieldByNumber(1);
        FieldDescriptor valueField = f.getMessageType().findFieldByNumber(2);
        for (Object e : entries) {
            MessageOrBuilder entry = (MessageOrBuilder) e;
            Object key = entry.getField(keyField);
            String at = path + "[" + key + "]";
            value(at, keyField, mr.getKeys(), key);
            value(at, valueField, mr.getValues(), entry.getField(valueField));
        }
    }

    /** Opens an Any the registry knows and checks what it carries, as Envoy does when it builds the extension. */
    private void any(String path, MessageOrBuilder any) {
        Descriptor d = any.getDescriptorForType();
        String url = (String) any.getField(d.findFieldByName("type_url"));
        ByteString bytes = (ByteString) any.getField(d.findFieldByName("value"));
        Descriptor inner;
        try {
            inner = types.getDescriptorForTypeUrl(url);
        } catch (InvalidProtocolBufferException e) {
            inner = null;
        }
        if (inner == null) {
            unresolved.add(url);
            return;
        }
        DynamicMessage m;
        try {
            m = DynamicMessage.parseFrom(inner, bytes);
        } catch (InvalidProtocolBufferException e) {
            violation(path, "any: value is no " + inner.getFullName() + ": " + e.getMessage());
            return;
        }
        message(path + "(" + inner.getName() + ")", m);
    }

    private static String join(String path, String name) {
        return path.isEmpty() ? name : path + "." + name;
    }
}
