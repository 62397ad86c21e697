package io.meshpilot.security.kube;

import io.meshpilot.features.JwtPolicy;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AuthenticationV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1TokenReview;
import io.kubernetes.client.openapi.models.V1TokenReviewSpec;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import io.kubernetes.client.openapi.models.V1UserInfo;
import io.meshpilot.security.BearerTokenAuthenticator;
import io.meshpilot.util.PrintableText;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * istiod's KubeJWTAuthenticator: a caller sending {@code authorization: Bearer <token>} is
 * the service account the API server's TokenReview ({@code authentication.k8s.io/v1}) says
 * the token belongs to, {@code spiffe://<trust domain>/ns/<ns>/sa/<sa>} from the review's
 * user {@code system:serviceaccount:<ns>:<sa>}. Under the third-party JWT policy the review
 * asks for audience {@code istio-ca} and the answer must confirm it. A review that cannot be
 * had (API server down, slow past {@link #REVIEW_TIMEOUT}, an error status) is an
 * authentication failure saying so, never a pass. Answers are cached briefly
 * ({@link ReviewCache}).
 */
public final class KubeJwtAuthenticator implements BearerTokenAuthenticator {
    /** istiod's name for it (KubeJWTAuthenticatorType). */
    public static final String TYPE = "KubeJWTAuthenticator";
    /** Bound on one TokenReview round trip; the agent's own call deadline is longer. */
    public static final Duration REVIEW_TIMEOUT = Duration.ofSeconds(5);
    public static final Duration CACHE_TTL = Duration.ofSeconds(30);
    static final int CACHE_CAPACITY = 10_000;
    /** istiod's metadata key naming the cluster whose API server should review the token. */
    static final String CLUSTER_ID_HEADER = "clusterid";
    private static final String SA_GROUP = "system:serviceaccounts";
    private static final String SA_USER_PREFIX = "system:serviceaccount:";
    private static final String POD_NAME_EXTRA = "authentication.kubernetes.io/pod-name";
    private static final String POD_UID_EXTRA = "authentication.kubernetes.io/pod-uid";
    private static final String DEFAULT_TRUST_DOMAIN = "cluster.local";
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");

    /** The API server's verdict on one token: a caller, or why the token was refused. */
    private record Verdict(KubernetesInfo info, String refusal) {
    }

    private final ApiClient api;
    private final JwtPolicy policy;
    private final String clusterId;
    private final Supplier<String> trustDomain;
    private final ReviewCache<Verdict> cache;

    /**
     * @param clusterId   this istiod's cluster: tokens naming another cluster are refused (remote
     *                    clusters' API servers are not reachable from here)
     * @param trustDomain read per authentication, as the mesh config may change it
     */
    public KubeJwtAuthenticator(ApiClient api, JwtPolicy policy, String clusterId, Supplier<String> trustDomain,
                                Duration cacheTtl) {
        this.api = api;
        this.policy = policy;
        this.clusterId = clusterId;
        this.trustDomain = trustDomain;
        this.cache = new ReviewCache<>(cacheTtl, CACHE_CAPACITY, System::nanoTime);
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public Caller authenticateToken(String token, Function<String, String> headers) throws AuthenticationException {
        String cluster = headers.apply(CLUSTER_ID_HEADER);
        if (cluster != null && !cluster.isEmpty() && !cluster.equals(clusterId)) {
            throw new AuthenticationException("client claims to be in cluster \"" + clip(cluster)
                    + "\", but this istiod reviews tokens only for cluster \"" + clusterId + "\"");
        }
        Verdict verdict = cache.get(token).orElse(null);
        if (verdict == null) {
            verdict = review(token);
            cache.put(token, verdict);
        }
        if (verdict.refusal() != null) {
            throw new AuthenticationException(verdict.refusal());
        }
        String td = trustDomain.get();
        td = td == null || td.isEmpty() ? DEFAULT_TRUST_DOMAIN : td;
        KubernetesInfo info = verdict.info();
        return new Caller(TYPE, List.of("spiffe://" + td + "/ns/" + info.namespace() + "/sa/"
                + info.serviceAccount()), info);
    }

    /**
     * Asks the API server. An answer (accepted or refused) is returned to be cached; not
     * reaching it throws, so that nothing is cached and the next call asks again.
     */
    private Verdict review(String token) throws AuthenticationException {
        V1TokenReview request = new V1TokenReview().apiVersion("authentication.k8s.io/v1").kind("TokenReview")
                .metadata(new V1ObjectMeta())
                .spec(new V1TokenReviewSpec().token(token).audiences(policy.audiences().isEmpty() ? null
                        : policy.audiences()));
        V1TokenReview answer;
        try {
            okhttp3.Call call = new AuthenticationV1Api(api).createTokenReview(request).buildCall(null);
            call.timeout().timeout(REVIEW_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            answer = api.<V1TokenReview>execute(call, V1TokenReview.class).getData();
        } catch (ApiException e) {
            String why = e.getCode() == 0 ? String.valueOf(e.getCause() == null ? e.getMessage() : e.getCause())
                    : "HTTP " + e.getCode();
            throw new AuthenticationException("TokenReview API unavailable (" + clip(why) + "); token not accepted");
        } catch (RuntimeException e) {
            throw new AuthenticationException("TokenReview API unavailable (" + clip(e.toString())
                    + "); token not accepted");
        }
        return verdict(answer == null ? null : answer.getStatus());
    }

    /** istiod's reading of a TokenReview status, plus the audience check the API asks of its clients. */
    private Verdict verdict(V1TokenReviewStatus status) {
        if (status == null) {
            return refused("the TokenReview answer has no status");
        }
        if (status.getError() != null && !status.getError().isEmpty()) {
            return refused("the service account authentication returns an error: " + clip(status.getError()));
        }
        if (!Boolean.TRUE.equals(status.getAuthenticated())) {
            return refused("the token is not authenticated");
        }
        V1UserInfo user = status.getUser();
        if (user == null || user.getGroups() == null || !user.getGroups().contains(SA_GROUP)) {
            return refused("the token is not a service account");
        }
        if (!policy.audiences().isEmpty()) {
            List<String> confirmed = status.getAudiences() == null ? List.of() : status.getAudiences();
            if (confirmed.stream().noneMatch(policy.audiences()::contains)) {
                return refused("the token is not for audience " + policy.audiences() + " (JWT_POLICY="
                        + policy.envValue() + "); the review confirmed " + confirmed);
            }
        }
        String username = user.getUsername() == null ? "" : user.getUsername();
        String[] parts = username.split(":", -1);
        if (!username.startsWith(SA_USER_PREFIX) || parts.length != 4) {
            return refused("invalid username field in the token review result: " + clip(username));
        }
        String ns = parts[2];
        String sa = parts[3];
        // also keeps '/' and other URI syntax out of the SPIFFE id
        if (!DNS_LABEL.matcher(ns).matches() || !DNS_SUBDOMAIN.matcher(sa).matches()) {
            return refused("invalid service account in the token review result: " + clip(username));
        }
        return new Verdict(new KubernetesInfo(ns, sa, extra(user, POD_NAME_EXTRA), extra(user, POD_UID_EXTRA)), null);
    }

    private static Verdict refused(String why) {
        return new Verdict(null, why);
    }

    private static String extra(V1UserInfo user, String key) {
        Map<String, List<String>> extra = user.getExtra();
        List<String> values = extra == null ? null : extra.get(key);
        return values == null || values.size() != 1 ? "" : values.getFirst();
    }

    /** A value for a message: printable ASCII, cut short. */
    static String clip(String s) {
        return PrintableText.clip(s, 200);
    }
}
