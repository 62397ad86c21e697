package io.meshpilot.security.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.Config;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.SubjectAccessReviews;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * istiod's Authorize against the API server stand-in over real HTTP: one SubjectAccessReview
 * per service account (list secrets in its namespace), the answer kept, allowed or refused; an
 * API server that cannot answer refuses with the cause and is asked again next time.
 */
class SecretAccessReviewsTest {
    @TempDir
    Path dir;
    FakeApiServer api;
    SecretAccessReviews reviews;

    @BeforeEach
    void start() throws Exception {
        api = FakeApiServer.start();
        ApiClient client = Config.fromConfig(api.writeKubeconfig(dir).toString());
        reviews = new SecretAccessReviews(client);
    }

    @AfterEach
    void stop() {
        api.stop();
    }

    @Test
    void oneReviewPerServiceAccountAllowedOrRefusedAndKept() {
        api.accessReviews().allow("system:serviceaccount:edge:gw", "list", "secrets", "edge");
        assertEquals(Optional.empty(), reviews.refusal("gw", "edge"));
        assertEquals(Optional.empty(), reviews.refusal("gw", "edge"));
        Optional<String> refused = reviews.refusal("web", "edge");
        assertEquals(Optional.of("web/edge is not authorized to read secrets: "), refused);
        assertEquals(refused, reviews.refusal("web", "edge"));
        assertEquals(List.of(new SubjectAccessReviews.Question("system:serviceaccount:edge:gw", "list", "secrets", "edge"),
                new SubjectAccessReviews.Question("system:serviceaccount:edge:web", "list", "secrets", "edge")),
                api.accessReviews().asked(), "each asked once");
    }

    @Test
    void anApiServerThatCannotAnswerRefusesAndIsAskedAgain() {
        api.accessReviews().allow("system:serviceaccount:edge:gw", "list", "secrets", "edge").failWith(503);
        Optional<String> refused = reviews.refusal("gw", "edge");
        assertTrue(refused.isPresent() && refused.get().contains("SubjectAccessReview for "
                + "system:serviceaccount:edge:gw failed: HTTP 503"), refused.toString());
        api.accessReviews().failWith(0);
        assertEquals(Optional.empty(), reviews.refusal("gw", "edge"), "the failure was not kept");
    }
}
