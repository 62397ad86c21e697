package io.meshpilot.security.jwt;

import io.meshpilot.security.Authenticator.AuthenticationException;
import java.util.List;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.lang.JoseException;

/** Where one issuer's verification keys come from: inline in the rule, or loaded from a URI. */
sealed interface JwksSource permits JwksSource.Inline, RemoteJwks {

    /** The keys held now, loading them first when none are. */
    List<JsonWebKey> keys() throws AuthenticationException;

    /**
     * Loads the keys again because a token named a key that {@code seen} lacks (the issuer may
     * have rotated). Loads at most once per refresh interval; returns the keys then held.
     */
    List<JsonWebKey> reload(List<JsonWebKey> seen) throws AuthenticationException;

    static List<JsonWebKey> parse(String json) throws JoseException {
        return List.copyOf(new JsonWebKeySet(json).getJsonWebKeys());
    }

    /** A key set written into the rule: fixed for the life of the process. */
    record Inline(List<JsonWebKey> keys) implements JwksSource {
        public Inline {
            keys = List.copyOf(keys);
        }

        @Override
        public List<JsonWebKey> reload(List<JsonWebKey> seen) {
            return keys;
        }
    }
}
