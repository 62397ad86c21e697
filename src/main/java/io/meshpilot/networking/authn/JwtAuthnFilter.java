package io.meshpilot.networking.authn;

import com.google.protobuf.Any;
import com.google.protobuf.Empty;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtClaimToHeader;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtHeader;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtProvider;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtRequirement;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtRequirementAndList;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtRequirementOrList;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.RequirementRule;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.api.security.v1beta1.ClaimToHeader;
import io.meshpilot.api.security.v1beta1.JWTHeader;
import io.meshpilot.api.security.v1beta1.JWTRule;
import io.meshpilot.api.security.v1beta1.RequestAuthentication;
import io.meshpilot.config.Config;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The {@code envoy.filters.http.jwt_authn} filter that enforces the RequestAuthentications of a
 * proxy, as istiod's convertToEnvoyJwtConfig builds it: the rules of every applicable policy,
 * sorted by issuer, each a provider {@code origins-<i>}; keys inline (the rule's {@code jwks}, or
 * the key set MeshPilot fetched from {@code jwksUri} / OIDC discovery, or the fail-closed
 * fallback). One requirement on prefix {@code /}: with one provider "that provider or
 * allow_missing"; with several, any one provider, or all of "provider or allow_missing". So a
 * request without a token passes (an AuthorizationPolicy may still demand a principal) and a
 * request with a token that fails verification is rejected with 401.
 *
 * <p>Every provider writes the verified payload into the dynamic metadata of
 * {@value #FILTER_NAME} under the key {@value #PAYLOAD_METADATA_KEY} (istiod's
 * EnvoyJwtFilterPayload); istiod's RBAC matches {@code requestPrincipals} (claims {@code iss}
 * and {@code sub}) and {@code request.auth.claims[...]} there. istiod stopped generating the
 * istio-proxy-only {@code istio_authn} filter, so plain Envoy and istio-proxy get the same
 * config.
 */
public final class JwtAuthnFilter {
    /** The filter's name, and the dynamic metadata namespace the payload is written to. */
    public static final String FILTER_NAME = "envoy.filters.http.jwt_authn";
    /** The key of the verified payload (a Struct of the token's claims) in the filter's metadata. */
    public static final String PAYLOAD_METADATA_KEY = "payload";
    /** Claims whose space-delimited string value is also written as a list (istiod's defaults). */
    static final List<String> SPACE_DELIMITED_CLAIMS = List.of("permission", "scope");

    /**
     * istiod's buildSpaceDelimitedClaims: the defaults when the rule names none, else the
     * rule's claims and the defaults, deduplicated and sorted.
     */
    static List<String> spaceDelimitedClaims(List<String> ruleClaims) {
        if (ruleClaims.isEmpty()) {
            return SPACE_DELIMITED_CLAIMS;
        }
        TreeSet<String> all = new TreeSet<>(ruleClaims);
        all.addAll(SPACE_DELIMITED_CLAIMS);
        return List.copyOf(all);
    }

    private JwtAuthnFilter() {
    }

    /**
     * The filter for {@code proxy}'s inbound HTTP chains or gateway connection managers, or none
     * when no RequestAuthentication with a rule applies. Gateways clear the route cache after
     * verification (their routes may match on claims); sidecars do not, as istiod.
     */
    public static Optional<HttpFilter> forProxy(Proxy proxy, PushContext push) {
        List<Config> policies = RequestAuthenticationSelection.forProxy(push.requestAuthentications(),
                push.rootNamespace(), proxy);
        List<JWTRule> rules = new ArrayList<>();
        for (Config c : policies) {
            rules.addAll(((RequestAuthentication) c.spec()).getJwtRulesList());
        }
        return build(rules, rule -> push.remoteKeySet(PushContext.jwksRef(rule)), proxy.type() != Proxy.Type.SIDECAR);
    }

    /**
     * The filter for {@code rules} (istiod's order: as the policies list them), with the key set
     * of a rule without inline keys from {@code remoteKeys}.
     */
    public static Optional<HttpFilter> build(List<JWTRule> rules, Function<JWTRule, String> remoteKeys,
                                             boolean clearRouteCache) {
        if (rules.isEmpty()) {
            return Optional.empty();
        }
        List<JWTRule> sorted = new ArrayList<>(rules);
        sorted.sort(Comparator.comparing(JWTRule::getIssuer)); // stable: equal issuers keep policy order
        JwtAuthentication.Builder config = JwtAuthentication.newBuilder().setBypassCorsPreflight(true);
        List<JwtRequirement> eachOrMissing = new ArrayList<>();
        List<JwtRequirement> anyProvider = new ArrayList<>();
        for (int i = 0; i < sorted.size(); i++) {
            JWTRule rule = sorted.get(i);
            String name = "origins-" + i;
            String keys = rule.getJwks().isEmpty() ? remoteKeys.apply(rule) : rule.getJwks();
            config.putProviders(name, provider(rule, keys, clearRouteCache));
            JwtRequirement byName = JwtRequirement.newBuilder().setProviderName(name).build();
            eachOrMissing.add(JwtRequirement.newBuilder().setRequiresAny(JwtRequirementOrList.newBuilder()
                    .addRequirements(byName)
                    .addRequirements(JwtRequirement.newBuilder().setAllowMissing(Empty.getDefaultInstance())))
                    .build());
            anyProvider.add(byName);
        }
        JwtRequirement requires;
        if (eachOrMissing.size() == 1) {
            requires = eachOrMissing.get(0);
        } else {
            // the inner AND makes any token present be valid for its provider; the outer OR lets
            // a request through whose token fits one provider when providers share a location
            // (the AND alone would fail it on the others)
            anyProvider.add(JwtRequirement.newBuilder().setRequiresAll(JwtRequirementAndList.newBuilder()
                    .addAllRequirements(eachOrMissing)).build());
            requires = JwtRequirement.newBuilder().setRequiresAny(JwtRequirementOrList.newBuilder()
                    .addAllRequirements(anyProvider)).build();
        }
        config.addRules(RequirementRule.newBuilder().setMatch(RouteMatch.newBuilder().setPrefix("/"))
                .setRequires(requires));
        return Optional.of(HttpFilter.newBuilder().setName(FILTER_NAME).setTypedConfig(Any.pack(config.build()))
                .build());
    }

    private static JwtProvider provider(JWTRule rule, String keys, boolean clearRouteCache) {
        JwtProvider.Builder p = JwtProvider.newBuilder()
                .setIssuer(rule.getIssuer())
                .addAllAudiences(rule.getAudiencesList())
                .setForward(rule.getForwardOriginalToken())
                .setForwardPayloadHeader(rule.getOutputPayloadToHeader())
                .setPayloadInMetadata(PAYLOAD_METADATA_KEY)
                .setNormalizePayloadInMetadata(JwtProvider.NormalizePayload.newBuilder()
                        .addAllSpaceDelimitedClaims(spaceDelimitedClaims(rule.getSpaceDelimitedClaimsList())))
                .setClearRouteCache(clearRouteCache)
                .setLocalJwks(DataSource.newBuilder().setInlineString(keys));
        for (ClaimToHeader c : rule.getOutputClaimToHeadersList()) {
            p.addClaimToHeaders(JwtClaimToHeader.newBuilder().setHeaderName(c.getHeader()).setClaimName(c.getClaim()));
        }
        for (JWTHeader h : rule.getFromHeadersList()) {
            p.addFromHeaders(JwtHeader.newBuilder().setName(h.getName()).setValuePrefix(h.getPrefix()));
        }
        p.addAllFromParams(rule.getFromParamsList());
        p.addAllFromCookies(rule.getFromCookiesList());
        return p.build();
    }
}
