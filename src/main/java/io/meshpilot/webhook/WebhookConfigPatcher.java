package io.meshpilot.webhook;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.kubernetes.client.util.generic.options.CreateOptions;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.ResourceListerWatcher;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.kube.controllers.SignallingInformer;
import io.meshpilot.monitoring.IstioCounter;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Keeps istiod's webhook configurations pointing at this control plane: the CA root in the
 * {@code caBundle} of each webhook, so the API server can verify 15017's certificate.
 * Two flavours, istiod's two controllers:
 * <ul>
 * <li>{@link #validating}: the ValidatingWebhookConfigurations labelled {@code istio.io/rev=<revision>}
 * (istiod's chart: {@code istio-validator[-rev]-<ns>}); after the caBundle, each webhook's
 * {@code failurePolicy} becomes Fail, but only once the API server is seen refusing an invalid
 * object through the webhook (a dry-run create of an invalid Gateway carrying
 * {@link ValidationWebhook#ALWAYS_REJECT}): until then the chart's Ignore keeps config
 * writable while the webhook cannot answer. Retried with backoff (100 ms doubling to 1 min).</li>
 * <li>{@link #injection}: the webhooks named {@code *sidecar-injector.istio.io} of the
 * MutatingWebhookConfigurations of this revision (istiod's webhookpatch).</li>
 * </ul>
 * A configuration someone resets is patched again (the informer sees the change), and a new
 * CA root re-patches them all ({@link #caBundleChanged}). Writes happen only between
 * {@link #lead()} and the close of its handle.
 */
public final class WebhookConfigPatcher {
    private static final System.Logger LOG = System.getLogger(WebhookConfigPatcher.class.getName());

    static final String GROUP = "admissionregistration.k8s.io";
    static final String REV_LABEL = "istio.io/rev";
    /** istiod's injection webhook entry name (suffix-matched). */
    static final String INJECTOR_WEBHOOK = "sidecar-injector.istio.io";
    private static final Backoff RETRY = new Backoff(Duration.ofMillis(100), Duration.ofMinutes(1));

    private static final IstioCounter CONFIG_UPDATES = IstioCounter.of("galley_validation_config_updates",
            "k8s webhook configuration updates");
    private static final IstioCounter CONFIG_UPDATE_ERRORS = IstioCounter.of("galley_validation_config_update_error",
            "reason", "k8s webhook configuration update error");
    private static final IstioCounter PATCH_ATTEMPTS = IstioCounter.of("webhook_patch_attempts_total", "name",
            "Webhook patching attempts");
    private static final IstioCounter PATCH_RETRIES = IstioCounter.of("webhook_patch_retries_total", "name",
            "Webhook patching retries");
    private static final IstioCounter PATCH_FAILURES = IstioCounter.of("webhook_patch_failures_total", "name", "reason",
            "Webhook patching total failures");

    private final String plural;
    private final boolean validating;
    private final String namespace;
    private final String revision;
    private final Supplier<String> caBundlePem;
    private final DynamicKubernetesApi api;
    private final DynamicKubernetesApi gateways;
    private final Cache<DynamicKubernetesObject> cache =
            new Cache<>();
    private final ControllerQueue<String> queue;
    private volatile boolean dryRunRejected;
    private volatile boolean notReadyLogged;

    private WebhookConfigPatcher(KubeClient client, String plural, boolean validating, String namespace, String revision,
                                 Supplier<String> caBundlePem) {
        this.queue = new ControllerQueue<>("webhook-patcher-" + plural, RETRY, this::reconcileOrRetry);
        this.plural = plural;
        this.validating = validating;
        this.namespace = namespace;
        this.revision = revision == null || revision.isEmpty() ? "default" : revision;
        this.caBundlePem = caBundlePem;
        this.api = new DynamicKubernetesApi(GROUP, "v1", plural, client.apiClient());
        this.gateways = new DynamicKubernetesApi("networking.istio.io", "v1", "gateways", client.apiClient());
        String selector = REV_LABEL + "=" + this.revision;
        String name = GROUP + "/v1/" + plural + " " + selector;
        var informer = new SignallingInformer<>(DynamicKubernetesObject.class,
                ResourceListerWatcher.of(name, api, null, selector, null), cache, client.watchErrorHandler(name));
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(DynamicKubernetesObject o) {
                enqueue(o.getMetadata().getName());
            }

            @Override
            public void onUpdate(DynamicKubernetesObject old, DynamicKubernetesObject o) {
                enqueue(o.getMetadata().getName()); // reset by someone: patched again
            }

            @Override
            public void onDelete(DynamicKubernetesObject o, boolean unknown) {
            }
        });
        client.addInformer(name, informer);
    }

    /**
     * istiod's validation controller for {@code revision} ("" is "default") in {@code namespace}
     * (where the probe Gateway is dry-run created).
     *
     * @param caBundlePem the CA root as PEM, read at each patch
     */
    public static WebhookConfigPatcher validating(KubeClient client, String namespace, String revision,
                                                  Supplier<String> caBundlePem) {
        return new WebhookConfigPatcher(client, "validatingwebhookconfigurations", true, namespace, revision,
                caBundlePem);
    }

    /** istiod's injection webhook cert patcher for {@code revision}. */
    public static WebhookConfigPatcher injection(KubeClient client, String namespace, String revision,
                                                 Supplier<String> caBundlePem) {
        return new WebhookConfigPatcher(client, "mutatingwebhookconfigurations", false, namespace, revision,
                caBundlePem);
    }

    /** Starts patching: every configuration now, then each change. The handle stops it. */
    public AutoCloseable lead() {
        return queue.start(this::enqueueAll);
    }

    /** The CA root changed: every configuration is patched again. */
    public void caBundleChanged() {
        enqueueAll();
    }

    private void enqueueAll() {
        for (DynamicKubernetesObject o : cache.list()) {
            enqueue(o.getMetadata().getName());
        }
    }

    private void enqueue(String name) {
        queue.add(name);
    }

    /** One reconcile, retried with a doubling delay (100 ms up to a minute) until it succeeds. */
    private Outcome reconcileOrRetry(String name) {
        boolean done;
        try {
            done = reconcile(name);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, plural + " " + name + " not patched (retrying): " + e);
            done = false;
        }
        if (done) {
            return Outcome.DONE;
        }
        if (!validating) {
            PATCH_RETRIES.increment(name);
        }
        return Outcome.RETRY;
    }

    /** Brings one configuration up to date; false to retry later. */
    private boolean reconcile(String name) {
        DynamicKubernetesObject current = cache.getByKey(name);
        if (current == null) {
            return true; // gone; a new one is an informer event
        }
        String pem = caBundlePem.get();
        if (pem == null || !pem.contains("-----BEGIN CERTIFICATE-----")) {
            LOG.log(Level.WARNING, "no CA root to patch into " + plural + " " + name);
            if (!validating) {
                PATCH_FAILURES.increment(name, "load_ca_bundle_failure");
            }
            return true; // retried when the root changes
        }
        String caBundle = Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.UTF_8));
        JsonObject raw = current.getRaw().deepCopy();
        JsonArray webhooks = raw.has("webhooks") && raw.get("webhooks").isJsonArray() ? raw.getAsJsonArray("webhooks")
                : new JsonArray();
        boolean caChange = false;
        boolean failOpen = false;
        boolean found = false;
        for (JsonElement e : webhooks) {
            JsonObject wh = e.getAsJsonObject();
            if (!validating && !string(wh, "name").endsWith(INJECTOR_WEBHOOK)) {
                continue;
            }
            found = true;
            JsonObject clientConfig = wh.has("clientConfig") ? wh.getAsJsonObject("clientConfig") : new JsonObject();
            caChange |= !caBundle.equals(string(clientConfig, "caBundle"));
            failOpen |= validating && wh.has("failurePolicy") && !"Fail".equals(string(wh, "failurePolicy"));
        }
        if (!found && !validating) {
            PATCH_FAILURES.increment(name, "webhook_entry_not_found");
            return true;
        }
        if (!caChange && !failOpen) {
            return true;
        }
        boolean failClose = failOpen && readyForFailClose();
        if (!caChange && !failClose) {
            return false; // nothing to write yet: the webhook is not seen refusing; asked again later
        }
        for (JsonElement e : webhooks) {
            JsonObject wh = e.getAsJsonObject();
            if (!validating && !string(wh, "name").endsWith(INJECTOR_WEBHOOK)) {
                continue;
            }
            if (!wh.has("clientConfig")) {
                wh.add("clientConfig", new JsonObject());
            }
            wh.getAsJsonObject("clientConfig").addProperty("caBundle", caBundle);
            if (failClose) {
                wh.addProperty("failurePolicy", "Fail");
            }
        }
        if (!validating) {
            PATCH_ATTEMPTS.increment(name);
        }
        // the resourceVersion read is the precondition: a concurrent change is a 409 and a retry
        KubernetesApiResponse<DynamicKubernetesObject> r = api.update(new DynamicKubernetesObject(raw));
        if (!r.isSuccess()) {
            String reason = r.getStatus() == null || r.getStatus().getReason() == null ? "Unknown"
                    : r.getStatus().getReason();
            LOG.log(Level.WARNING, plural + " " + name + " not patched (retrying): HTTP " + r.getHttpStatusCode() + " "
                    + (r.getStatus() == null ? "" : r.getStatus().getMessage()));
            if (validating) {
                CONFIG_UPDATE_ERRORS.increment(reason);
            } else {
                PATCH_FAILURES.increment(name, "webhook_update_failure");
            }
            return false;
        }
        if (validating) {
            CONFIG_UPDATES.increment();
        }
        LOG.log(Level.INFO, plural + " " + name + " patched: caBundle" + (failClose ? ", failurePolicy Fail" : ""));
        return !failOpen || failClose; // still failing open: try again until the webhook is seen refusing
    }

    /**
     * istiod's readyForFailClose: the API server refuses a dry-run create of an invalid
     * Gateway ("denied the request"), so the webhook is reachable through its Service with
     * the patched caBundle. Without the Gateway CRD, or with another webhook that does not
     * support dry run, the check cannot be made and counts as passed, as in istiod.
     */
    private boolean readyForFailClose() {
        if (dryRunRejected) {
            return true;
        }
        JsonObject gw = new JsonObject();
        gw.addProperty("apiVersion", "networking.istio.io/v1");
        gw.addProperty("kind", "Gateway");
        JsonObject meta = new JsonObject();
        meta.addProperty("name", "invalid-gateway");
        meta.addProperty("namespace", namespace);
        JsonObject labels = new JsonObject();
        labels.addProperty(REV_LABEL, revision);
        meta.add("labels", labels);
        JsonObject annotations = new JsonObject();
        annotations.addProperty(ValidationWebhook.ALWAYS_REJECT, "true");
        meta.add("annotations", annotations);
        gw.add("metadata", meta);
        gw.add("spec", new JsonObject());
        KubernetesApiResponse<DynamicKubernetesObject> r = gateways.create(namespace, new DynamicKubernetesObject(gw),
                new CreateOptions().dryRun("All"));
        if (r.isSuccess()) {
            // INFO once, then at each retry only in debug: retries go on for as long as it lasts
            LOG.log(notReadyLogged ? Level.DEBUG : Level.INFO, "not switching validation to fail-closed yet: an "
                    + "invalid Gateway was not rejected (dry run)");
            notReadyLogged = true;
            return false;
        }
        String message = r.getStatus() == null || r.getStatus().getMessage() == null ? "" : r.getStatus().getMessage();
        boolean ready = message.contains("denied the request")
                || message.contains("the server could not find the requested resource")
                || message.contains("does not support dry run") || r.getHttpStatusCode() == 404;
        if (ready) {
            LOG.log(Level.INFO, "the webhook rejected invalid config; switching validation to fail-closed");
            dryRunRejected = true;
        } else {
            LOG.log(notReadyLogged ? Level.DEBUG : Level.INFO, "not switching validation to fail-closed yet: invalid "
                    + "Gateway rejected for another reason: HTTP " + r.getHttpStatusCode() + " " + message);
            notReadyLogged = true;
        }
        return ready;
    }

    private static String string(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }

    @Override
    public String toString() {
        return "webhook patcher " + plural + " " + REV_LABEL + "=" + revision;
    }

}
