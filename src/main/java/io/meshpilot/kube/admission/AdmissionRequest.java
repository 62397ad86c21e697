package io.meshpilot.kube.admission;

import com.google.gson.JsonObject;

/**
 * The part of an AdmissionReview's {@code request} the webhooks read (admission.k8s.io v1
 * and v1beta1 have the same fields).
 *
 * @param kind      the object's kind as the API server names it ({@code group}, {@code version}, {@code kind})
 * @param resource  the resource requested ({@code group}, {@code version}, {@code resource}: the plural)
 * @param operation CREATE, UPDATE, DELETE or CONNECT
 * @param object    the object as it would be stored; null for DELETE
 * @param oldObject the stored object for UPDATE and DELETE; else null
 * @param dryRun    nothing will be stored whatever the answer (kubectl --dry-run=server)
 */
public record AdmissionRequest(String uid, Gvk kind, Gvr resource, String name, String namespace, String operation,
                               JsonObject object, JsonObject oldObject, boolean dryRun) {

    /** Group, version and kind. */
    public record Gvk(String group, String version, String kind) {
    }

    /** Group, version and resource (plural). */
    public record Gvr(String group, String version, String resource) {
    }
}
