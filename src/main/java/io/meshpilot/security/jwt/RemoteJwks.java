package io.meshpilot.security.jwt;

import io.meshpilot.security.Authenticator.AuthenticationException;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.lang.JoseException;

/**
 * A key set loaded from a URI (a file, an HTTP(S) endpoint, or the one OIDC discovery names),
 * cached until a token names a key it lacks. Loads are rate limited, failures included, so
 * tokens with made-up key ids cannot turn into a stream of requests to the issuer; a failed load
 * fails authentication with its reason and leaves the keys held before in use.
 */
final class RemoteJwks implements JwksSource {
    /** Produces the key set document. */
    @FunctionalInterface
    interface Loader {
        String load() throws IOException;
    }

    private final Loader loader;
    private final String origin;
    private final Clock clock;
    private final Duration minInterval;
    private volatile List<JsonWebKey> keys; // null until a load succeeded
    private Instant lastAttempt; // guarded by this
    private String lastFailure; // guarded by this; null when the last load succeeded

    RemoteJwks(Loader loader, String origin, Clock clock, Duration minInterval) {
        this.loader = loader;
        this.origin = origin;
        this.clock = clock;
        this.minInterval = minInterval;
    }

    @Override
    public List<JsonWebKey> keys() throws AuthenticationException {
        List<JsonWebKey> held = keys;
        return held != null ? held : reload(null);
    }

    @Override
    public synchronized List<JsonWebKey> reload(List<JsonWebKey> seen) throws AuthenticationException {
        if (keys != null && keys != seen) {
            return keys; // another caller loaded newer keys while this one waited
        }
        Instant now = clock.instant();
        if (lastAttempt != null && now.isBefore(lastAttempt.plus(minInterval))) {
            if (lastFailure != null) {
                throw unavailable();
            }
            return keys;
        }
        lastAttempt = now;
        try {
            keys = JwksSource.parse(loader.load());
            lastFailure = null;
            return keys;
        } catch (IOException | JoseException | RuntimeException e) {
            String msg = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            lastFailure = msg.length() > 200 ? msg.substring(0, 200) + "..." : msg;
            throw unavailable();
        }
    }

    private AuthenticationException unavailable() {
        return new AuthenticationException("key set unavailable from " + origin + ": " + lastFailure);
    }
}
