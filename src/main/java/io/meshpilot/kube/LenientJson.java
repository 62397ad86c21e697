package io.meshpilot.kube;

import io.kubernetes.client.openapi.JSON;
import java.time.LocalDate;
import java.time.OffsetDateTime;

/**
 * Reads Kubernetes objects the way the API's compatibility rules expect a client to: fields
 * this client version does not know are ignored, and a missing field is null rather than an
 * error. client-java's generated models validate every object they read (unknown fields and
 * missing required ones throw), and an informer whose list or watch response holds one such
 * object fails as a whole and retries forever: every Pod stops updating when the cluster is
 * one Kubernetes version newer than the client (kubernetes-client/java#4809), or when a
 * single stored object is odd. Without those validating adapters Gson maps the same models by
 * their {@code @SerializedName} fields; the date, byte and quantity adapters are kept.
 *
 * <p>client-java holds its Gson in one static field, so this is per process; every API client
 * in it reads leniently once {@link #install()} has run.
 */
public final class LenientJson {
    private static volatile boolean installed;

    private LenientJson() {
    }

    /** Idempotent. */
    public static synchronized void install() {
        if (installed) {
            return;
        }
        JSON.setGson(JSON.createGson()
                .registerTypeAdapter(java.util.Date.class, new JSON.DateTypeAdapter())
                .registerTypeAdapter(java.sql.Date.class, new JSON.SqlDateTypeAdapter())
                .registerTypeAdapter(OffsetDateTime.class, new JSON.OffsetDateTimeTypeAdapter())
                .registerTypeAdapter(LocalDate.class, new JSON.LocalDateTypeAdapter())
                .registerTypeAdapter(byte[].class, new JSON.ByteArrayAdapter())
                .create());
        installed = true;
    }
}
