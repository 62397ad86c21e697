package io.meshpilot.config.kube;

import com.google.gson.Gson;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Status;
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
                            "the API server says: " + message);
            case 400, 422 -> new ConfigStoreException.Invalid(key, new ValidationResult(
                    List.of(new ValidationResult.Issue("", "API server: " + message)), List.of()));
            default -> new ConfigStoreException.Unavailable(key, "API server answered HTTP " + code + ": " + message, null);
        };
    }

    /** The failure an {@link io.kubernetes.client.openapi.ApiException} of a typed call is. */
    static ConfigStoreException failure(ConfigKey key, ApiException e,
                                        String givenResourceVersion) {
        if (e.getCode() == 0) {
            return new ConfigStoreException.Unavailable(key, "API server unreachable: " + e.getMessage(), e);
        }
        V1Status status = null;
        try {
            status = e.getResponseBody() == null ? null
                    : new Gson().fromJson(e.getResponseBody(), V1Status.class);
        } catch (RuntimeException notAStatus) {
            // the answer's code is enough
        }
        try {
            check(key, new KubernetesApiResponse<>(status, e.getCode()), givenResourceVersion);
        } catch (ConfigStoreException f) {
            return f;
        }
        return new ConfigStoreException.Unavailable(key, "API server answered HTTP " + e.getCode(), e);
    }

    /** A request that got no answer (connection refused, reset, timeout). */
    static ConfigStoreException unreachable(ConfigKey key, RuntimeException e) {
        return new ConfigStoreException.Unavailable(key, "API server unreachable: " + e.getMessage(), e);
    }
}
