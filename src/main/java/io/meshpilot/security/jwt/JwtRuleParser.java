package io.meshpilot.security.jwt;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.lang.JoseException;

/**
 * Reads the {@code JWT_RULE} environment variable. istiod takes one JWTRule as a JSON object
 * (its example: {@code {"issuer": "foo", "jwks_uri": "baz", "audiences": ["aud1", "aud2"]}});
 * MeshPilot also takes a JSON array of them, one per issuer. Field names are the JWTRule's,
 * in either JSON spelling (lowerCamel or the proto's snake_case), as istiod's protobuf JSON
 * reader accepts both. Fields that only configure Envoy's JWT filter are accepted and unused;
 * any other field is an error, so a misspelt {@code jwksUri} fails start-up instead of
 * silently falling back to OIDC discovery.
 */
public final class JwtRuleParser {
    private static final String ENV = "JWT_RULE";
    /** JWTRule fields that only matter to proxies (where a token is read, what is forwarded). */
    private static final Set<String> UNUSED = Set.of("fromHeaders", "fromParams", "fromCookies",
            "outputPayloadToHeader", "forwardOriginalToken", "outputClaimToHeaders", "timeout");

    private JwtRuleParser() {
    }

    /**
     * The rules in {@code json}; none when it is blank (JWT_RULE unset: no token authenticator).
     *
     * @throws IllegalArgumentException naming the rule index and field of the first problem
     */
    public static List<JwtRule> parse(String json) {
        if (json == null || json.isBlank()) {
            return List.of();
        }
        JsonElement root = readStrict(json);
        List<JsonElement> items = new ArrayList<>();
        if (root.isJsonArray()) {
            root.getAsJsonArray().forEach(items::add);
            if (items.isEmpty()) {
                throw new IllegalArgumentException(ENV + ": the array holds no rule");
            }
        } else if (root.isJsonObject()) {
            items.add(root);
        } else {
            throw new IllegalArgumentException(ENV + ": must be a JSON object (one JWTRule) or an array of them");
        }
        List<JwtRule> rules = new ArrayList<>();
        Map<String, Integer> issuers = new HashMap<>();
        for (int i = 0; i < items.size(); i++) {
            JwtRule rule = rule(i, items.get(i));
            Integer previous = issuers.putIfAbsent(rule.issuer(), i);
            if (previous != null) {
                throw error(i, "issuer", "\"" + rule.issuer() + "\" is already the issuer of rule " + previous);
            }
            rules.add(rule);
        }
        return List.copyOf(rules);
    }

    private static JsonElement readStrict(String json) {
        try (JsonReader reader = new JsonReader(new StringReader(json))) {
            reader.setStrictness(Strictness.STRICT);
            JsonElement root = JsonParser.parseReader(reader);
            if (reader.peek() != JsonToken.END_DOCUMENT) {
                throw new IllegalArgumentException(ENV + ": not valid JSON: data after the end of the value");
            }
            return root;
        } catch (JsonParseException | IOException | IllegalStateException e) {
            throw new IllegalArgumentException(ENV + ": not valid JSON: " + rootCause(e));
        }
    }

    private static JwtRule rule(int index, JsonElement item) {
        if (!item.isJsonObject()) {
            throw error(index, "", "must be a JSON object");
        }
        JsonObject obj = item.getAsJsonObject();
        String issuer = "";
        List<String> audiences = List.of();
        String jwksUri = "";
        String jwks = "";
        Set<String> seen = new HashSet<>();
        for (var member : obj.entrySet()) {
            String field = lowerCamel(member.getKey());
            if (!seen.add(field)) {
                throw error(index, member.getKey(), "set twice (as " + field + " and its snake_case name)");
            }
            JsonElement value = member.getValue();
            switch (field) {
                case "issuer" -> issuer = string(index, member.getKey(), value);
                case "audiences" -> audiences = strings(index, member.getKey(), value);
                case "jwksUri" -> jwksUri = string(index, member.getKey(), value);
                case "jwks" -> jwks = string(index, member.getKey(), value);
                default -> {
                    if (!UNUSED.contains(field)) {
                        throw error(index, member.getKey(), "unknown field");
                    }
                }
            }
        }
        if (issuer.isEmpty()) {
            throw error(index, "issuer", "required");
        }
        for (int a = 0; a < audiences.size(); a++) {
            if (audiences.get(a).isEmpty()) {
                throw error(index, "audiences[" + a + "]", "must not be empty");
            }
        }
        if (!jwks.isEmpty()) {
            try {
                new JsonWebKeySet(jwks);
            } catch (JoseException | RuntimeException e) {
                throw error(index, "jwks", "not a valid JWKS document: " + e.getMessage());
            }
        } else if (!jwksUri.isEmpty()) {
            checkJwksUri(index, jwksUri);
        } else if (!isHttpUrl(issuer)) {
            throw error(index, "jwksUri", "required when jwks is not set and the issuer is not an http(s) URL"
                    + " to discover the keys from (OIDC discovery)");
        }
        return new JwtRule(issuer, audiences, jwksUri, jwks);
    }

    private static void checkJwksUri(int index, String value) {
        URI uri;
        try {
            uri = new URI(value);
        } catch (URISyntaxException e) {
            throw error(index, "jwksUri", "not a valid URI: " + e.getMessage());
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        switch (scheme) {
            case "http", "https" -> {
                if (uri.getHost() == null) {
                    throw error(index, "jwksUri", "\"" + value + "\" has no host");
                }
            }
            case "file" -> {
                if (uri.isOpaque() || uri.getPath() == null || !uri.getPath().startsWith("/")) {
                    throw error(index, "jwksUri", "\"" + value + "\" must name an absolute path (file:/path)");
                }
            }
            default -> throw error(index, "jwksUri", "\"" + value + "\" must be an https:, http: or file: URI");
        }
    }

    static boolean isHttpUrl(String s) {
        try {
            URI uri = new URI(s);
            return uri.getHost() != null
                    && ("https".equalsIgnoreCase(uri.getScheme()) || "http".equalsIgnoreCase(uri.getScheme()));
        } catch (URISyntaxException e) {
            return false;
        }
    }

    /** The lowerCamel JSON name of a field given in either spelling (jwks_uri -> jwksUri). */
    private static String lowerCamel(String name) {
        if (name.indexOf('_') < 0) {
            return name;
        }
        StringBuilder b = new StringBuilder(name.length());
        boolean upper = false;
        for (char c : name.toCharArray()) {
            if (c == '_') {
                upper = true;
            } else {
                b.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return b.toString();
    }

    private static String string(int index, String field, JsonElement value) {
        if (value.isJsonNull()) {
            return "";
        }
        if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isString()) {
            throw error(index, field, "must be a string");
        }
        return value.getAsString();
    }

    private static List<String> strings(int index, String field, JsonElement value) {
        if (value.isJsonNull()) {
            return List.of();
        }
        if (!value.isJsonArray()) {
            throw error(index, field, "must be an array of strings");
        }
        JsonArray array = value.getAsJsonArray();
        List<String> out = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            JsonElement e = array.get(i);
            if (!e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
                throw error(index, field + "[" + i + "]", "must be a string");
            }
            out.add(e.getAsString());
        }
        return out;
    }

    private static IllegalArgumentException error(int index, String field, String reason) {
        String where = field.isEmpty() ? "" : ": " + field;
        return new IllegalArgumentException(ENV + ": rule " + index + where + ": " + reason);
    }

    private static String rootCause(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }
}
