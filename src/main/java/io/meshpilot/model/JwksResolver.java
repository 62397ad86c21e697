package io.meshpilot.model;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;

/**
 * Where a push gets the key sets of RequestAuthentication rules that name a {@code jwksUri}
 * (or only an issuer, for OIDC discovery): istiod's JwksResolver, which fetches them and lets
 * the proxies see them inline (PILOT_JWT_ENABLE_REMOTE_JWKS=false, istiod's default).
 * {@link #resolve} must return within a small bound whatever the key servers do: a push uses
 * what is held and never waits on a slow server for longer than that bound.
 */
public interface JwksResolver {

    /**
     * istiod's PublicOnlyJwks: an RSA public key whose private key was discarded when it was
     * made, so no token verifies against it. A provider whose keys could not be fetched gets it
     * (fail closed: requests with a token are rejected, never let through unverified).
     */
    String PUBLIC_ONLY_JWKS = """
            {
              "keys": [
                {
                  "kty": "RSA",
                  "e": "AQAB",
                  "n": "0xObjM0UvS_oaazjpEYlAbwctEJ4L8pH3OuTb7qth7gUwqet-EzQB4dgFdvSdMgrLnSncQGRjpEYz3F3viIbH-3EN3TxSlPNviHxeOdyiBVfumN8dMxbLvVJUpfNOnvmMxJcl-8NNjAwcOjk4otSALaYgYYyOPyvKtgVdrQr-FoubWX4yrjxW-MJ2-7OBeepUUNOsVwGV23YX03sVkkyvY3otRflkBcY3_HKpBxJl9wk2GyOShN4_PNUF9-vwfnvOXMbCDX-w4PTef4geeb_GiT40YCKHTKMSPVanGRn5GExIWmki-mmqh94-mPTJyBR74ShspL3BxPZitDL574T1w"
                }
              ]
            }""";

    /** A resolver that holds nothing: every remote key set is the fail-closed fallback. */
    JwksResolver NONE = refs -> Map.of();

    /**
     * One remote key set as a rule names it.
     *
     * @param issuer  the rule's issuer (OIDC discovery starts from it when jwksUri is empty)
     * @param jwksUri the rule's jwksUri, or empty
     * @param timeout the rule's fetch timeout (istiod: 5s when unset)
     */
    record JwksRef(String issuer, String jwksUri, Duration timeout) {
    }

    /**
     * The key set documents held for {@code refs}; a ref missing from the result has none (yet,
     * or its fetch failed) and must be given {@link #PUBLIC_ONLY_JWKS}.
     */
    Map<JwksRef, String> resolve(Collection<JwksRef> refs);
}
