package io.meshpilot.security.jwt;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;

/**
 * OpenID Connect discovery, what istiod does for a rule without jwksUri: the issuer's
 * {@code /.well-known/openid-configuration} names the key set. As go-oidc (istiod's library)
 * requires, the document must state the same issuer, so a look-alike host cannot supply keys.
 */
final class OidcDiscovery {
    private OidcDiscovery() {
    }

    static URI jwksUri(DocumentFetcher fetcher, String issuer) throws IOException {
        return jwksUri(fetcher, issuer, null);
    }

    /** As {@link #jwksUri(DocumentFetcher, String)}, the discovery document read within {@code deadline} (null: the fetcher's). */
    static URI jwksUri(DocumentFetcher fetcher, String issuer, Duration deadline) throws IOException {
        String base = issuer.endsWith("/") ? issuer.substring(0, issuer.length() - 1) : issuer;
        URI config = URI.create(base + "/.well-known/openid-configuration");
        JsonObject doc;
        try {
            JsonElement e = JsonParser.parseString(deadline == null ? fetcher.fetch(config) : fetcher.fetch(config, deadline));
            if (!e.isJsonObject()) {
                throw new IOException(config + ": not a JSON object");
            }
            doc = e.getAsJsonObject();
        } catch (JsonParseException e) {
            throw new IOException(config + ": not valid JSON");
        }
        if (!issuer.equals(string(doc, "issuer"))) {
            throw new IOException(config + ": states issuer \"" + string(doc, "issuer") + "\", not \"" + issuer + "\"");
        }
        String jwks = string(doc, "jwks_uri");
        if (jwks == null || !JwtRuleParser.isHttpUrl(jwks)) {
            throw new IOException(config + ": no http(s) jwks_uri");
        }
        return URI.create(jwks);
    }

    private static String string(JsonObject doc, String name) {
        JsonElement v = doc.get(name);
        return v != null && v.isJsonPrimitive() && v.getAsJsonPrimitive().isString() ? v.getAsString() : null;
    }
}
