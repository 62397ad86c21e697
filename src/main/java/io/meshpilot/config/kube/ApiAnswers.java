package io.meshpilot.config.kube;

import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.store.ConfigStoreException;
import io.meshpilot.config.validation.ValidationResult;
import java.util.List;

/**
 * The API server's answer to a write, as the store's typed failures: the API server decides
 * (409 AlreadyExists or Conflict, 404, 422), MeshPilot only translates.
 */
final class ApiAnswers {
    private ApiAnswers() {
    }

    /** Throws the failure {@code response} is, if it is one. */
    static void check(ConfigKey key, KubernetesApiResponse<?> response, String givenResourceVersion) {
        if (response.isSuccess()) {
            return;
        }
        int code = response.getHttpStatusCode();
        var status = response.getStatus();
        String reason = status == null || status.getReason() == null ? "" : status.getReason();
        String message = status == null || status.getMessage() == null ? "HTTP " + code : status.getMessage();
        throw switch (code) {
            case 404 -> new ConfigStoreException.NotFound(key);
            case 409 -> "AlreadyExists".equals(reason) ? new ConfigStoreException.AlreadyExists(key)
                    : new ConfigStoreException.Conflict(key, givenResourceVersion.isEmpty() ? "(none)" : givenResourceVersion,
                            "per the API server: " + message);
            case 400, 422 -> new ConfigStoreException.Invalid(key, new ValidationResult(
                    List.of(new ValidationResult.Issue("", "API server: " + message)), List.of()));
            default -> new ConfigStoreException.Unavailable(key, "API server answered HTTP " + code + ": " + message, null);
        };
    }

    /** A request that got no answer (connection refused, reset, timeout). */
    static ConfigStoreException unreachable(ConfigKey key, RuntimeException e) {
        return new ConfigStoreException.Unavailable(key, "API server unreachable: " + e.getMessage(), e);
    }
}
