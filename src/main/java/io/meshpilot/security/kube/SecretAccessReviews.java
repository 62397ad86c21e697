package io.meshpilot.security.kube;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AuthorizationV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ResourceAttributes;
import io.kubernetes.client.openapi.models.V1SubjectAccessReview;
import io.kubernetes.client.openapi.models.V1SubjectAccessReviewSpec;
import io.kubernetes.client.openapi.models.V1SubjectAccessReviewStatus;
import io.meshpilot.security.credentials.SecretReadAuthorizer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;

/**
 * istiod's credentials controller {@code Authorize}: a gateway may be given the Secrets of its
 * namespace only if RBAC lets its service account list secrets there, asked with a
 * SubjectAccessReview ({@code authorization.k8s.io/v1}, user
 * {@code system:serviceaccount:<ns>:<sa>}, verb {@code list}, resource {@code secrets}, the
 * namespace). Answers are kept per user, a refusal one minute and an allowance five, as istiod
 * keeps them, at most {@link #CAPACITY} users; not reaching the API server is a refusal that
 * is not kept, so the next request asks again.
 */
public final class SecretAccessReviews implements SecretReadAuthorizer {
    static final Duration REFUSAL_TTL = Duration.ofMinutes(1);
    static final Duration ALLOWANCE_TTL = Duration.ofMinutes(5);
    static final int CAPACITY = 10_000;
    private static final Duration REVIEW_TIMEOUT = Duration.ofSeconds(10);
    private static final Optional<String> ALLOWED = Optional.empty();

    private final ApiClient api;
    private final ReviewCache<Optional<String>> answers = new ReviewCache<>(REFUSAL_TTL, CAPACITY, System::nanoTime);

    public SecretAccessReviews(ApiClient api) {
        this.api = api;
    }

    @Override
    public Optional<String> refusal(String serviceAccount, String namespace) {
        String user = "system:serviceaccount:" + namespace + ":" + serviceAccount;
        Optional<Optional<String>> known = answers.get(user);
        if (known.isPresent()) {
            return known.get();
        }
        V1SubjectAccessReview request = new V1SubjectAccessReview().apiVersion("authorization.k8s.io/v1")
                .kind("SubjectAccessReview").metadata(new V1ObjectMeta())
                .spec(new V1SubjectAccessReviewSpec().user(user).resourceAttributes(new V1ResourceAttributes()
                        .namespace(namespace).verb("list").resource("secrets")));
        V1SubjectAccessReviewStatus status;
        try {
            Call call = new AuthorizationV1Api(api).createSubjectAccessReview(request).buildCall(null);
            call.timeout().timeout(REVIEW_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            V1SubjectAccessReview answer = api.<V1SubjectAccessReview>execute(call, V1SubjectAccessReview.class).getData();
            status = answer == null ? null : answer.getStatus();
        } catch (ApiException e) {
            return Optional.of("SubjectAccessReview for " + user + " failed: "
                    + (e.getCode() == 0 ? String.valueOf(e.getCause() == null ? e.getMessage() : e.getCause())
                    : "HTTP " + e.getCode()));
        }
        if (status != null && Boolean.TRUE.equals(status.getAllowed())) {
            answers.put(user, ALLOWED, ALLOWANCE_TTL);
            return ALLOWED;
        }
        Optional<String> refused = Optional.of(serviceAccount + "/" + namespace + " is not authorized to read secrets: "
                + (status == null || status.getReason() == null ? "" : status.getReason()));
        answers.put(user, refused);
        return refused;
    }
}
