package io.meshpilot.config.validation.policy;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import java.util.List;
import java.util.Map;

/**
 * An inline JWKS as istiod accepts it (it parses the text as a JSON Web Key Set): a JSON
 * object that is either one key or {@code {"keys": [...]}}, each key with a known "kty" and
 * the members that key type needs (RFC 7517/7518/8037).
 */
public final class JwksSyntax {
    private static final Map<String, List<String>> REQUIRED = Map.of(
            "RSA", List.of("n", "e"),
            "EC", List.of("crv", "x", "y"),
            "oct", List.of("k"),
            "OKP", List.of("crv", "x"));

    private JwksSyntax() {
    }

    /** Why {@code jwks} is not a usable key set, or null. */
    public static String check(String jwks) {
        Struct.Builder root = Struct.newBuilder();
        try {
            JsonFormat.parser().merge(jwks, root);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            return "jwks is not a JSON object: " + e.getMessage();
        }
        Map<String, Value> fields = root.getFieldsMap();
        if (!fields.containsKey("keys")) {
            return key(fields, "jwks");
        }
        Value keys = fields.get("keys");
        if (!keys.hasListValue()) {
            return "jwks \"keys\" must be a list of keys";
        }
        List<Value> list = keys.getListValue().getValuesList();
        for (int i = 0; i < list.size(); i++) {
            if (!list.get(i).hasStructValue()) {
                return "jwks keys[" + i + "] must be an object";
            }
            String why = key(list.get(i).getStructValue().getFieldsMap(), "jwks keys[" + i + "]");
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    private static String key(Map<String, Value> key, String where) {
        Value kty = key.get("kty");
        if (kty == null || !kty.hasStringValue()) {
            return where + " has no \"kty\" (key type)";
        }
        List<String> required = REQUIRED.get(kty.getStringValue());
        if (required == null) {
            return where + " has unsupported key type \"" + kty.getStringValue() + "\" (RSA, EC, oct or OKP)";
        }
        for (String member : required) {
            Value v = key.get(member);
            if (v == null || !v.hasStringValue() || v.getStringValue().isEmpty()) {
                return where + " (" + kty.getStringValue() + ") is missing \"" + member + "\"";
            }
        }
        return null;
    }
}
