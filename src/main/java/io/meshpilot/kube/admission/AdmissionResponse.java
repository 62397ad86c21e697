package io.meshpilot.kube.admission;

import java.util.List;

/**
 * A webhook's answer, the {@code response} of the AdmissionReview sent back (the request's uid
 * is added by {@link AdmissionReviews}).
 *
 * @param allowed   whether the API server may go on
 * @param message   why not (the API server prefixes it with "admission webhook ... denied the
 *                  request: "); null when allowed
 * @param warnings  shown by kubectl as "Warning: ..." lines; allowed or not
 * @param patch     a JSON Patch (RFC 6902) for mutating webhooks; null for none
 */
public record AdmissionResponse(boolean allowed, String message, List<String> warnings, String patch) {

    public AdmissionResponse {
        warnings = warnings == null ? List.of() : List.copyOf(warnings);
    }

    public static AdmissionResponse allow() {
        return new AdmissionResponse(true, null, List.of(), null);
    }

    public static AdmissionResponse allow(List<String> warnings) {
        return new AdmissionResponse(true, null, warnings, null);
    }

    /** Allowed with a JSON Patch to apply to the object. */
    public static AdmissionResponse patch(String jsonPatch, List<String> warnings) {
        return new AdmissionResponse(true, null, warnings, jsonPatch);
    }

    public static AdmissionResponse refuse(String message) {
        return new AdmissionResponse(false, message, List.of(), null);
    }
}
