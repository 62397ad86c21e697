package io.meshpilot.kube;

import io.kubernetes.client.openapi.ApiException;

/** A failed request to the API server, described on one line for a log line. */
public final class KubeErrors {
    private static final int MAX_LENGTH = 300;

    private KubeErrors() {
    }

    /**
     * The HTTP code and the start of the API server's answer, or, when no answer came, the
     * failure (the connection refused, the read timed out); never more than one line.
     */
    public static String oneLine(Throwable error) {
        String text;
        if (error instanceof ApiException api) {
            // client-java's own message spans lines (code, body and headers, each labelled)
            text = api.getCode() == 0 ? String.valueOf(api.getCause() != null ? api.getCause() : api.getMessage())
                    : "HTTP " + api.getCode() + (api.getResponseBody() == null ? "" : " " + api.getResponseBody());
        } else {
            Throwable root = error;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            text = root == error ? error.toString() : error + " (" + root + ")";
        }
        String one = text.replaceAll("\\s+", " ").trim();
        return one.length() > MAX_LENGTH ? one.substring(0, MAX_LENGTH) + "..." : one;
    }
}
