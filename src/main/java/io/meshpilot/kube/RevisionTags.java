package io.meshpilot.kube;

import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesListObject;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.kube.controllers.InformerController;
import io.meshpilot.kube.controllers.SignallingInformer;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

/**
 * Revision tags as istiod's pkg/revisions reads them: {@code istioctl tag set prod --revision
 * 1-28} writes a MutatingWebhookConfiguration {@code istio-revision-tag-prod} labelled
 * {@code istio.io/tag=prod} and {@code istio.io/rev=1-28}; namespaces and pods labelled
 * {@code istio.io/rev=prod} then belong to revision 1-28, and the tag {@code default} names the
 * revision {@code istio-injection=enabled} means. Every MutatingWebhookConfiguration with an
 * {@code istio.io/rev} label is watched (a revision's own injector webhook has no
 * {@code istio.io/tag}); a tag pointing at a revision no injector webhook serves is logged
 * with the webhook's name, the tag and the revision. The ValidatingWebhookConfiguration
 * {@value #DEFAULT_VALIDATOR} names the default revision ({@code istioctl tag set default} and
 * the chart's {@code defaultRevision} write it), which owns unlabelled objects when no
 * {@code default} tag exists.
 */
public final class RevisionTags implements UnaryOperator<String>, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RevisionTags.class.getName());
    static final String TAG_LABEL = "istio.io/tag";
    static final String REV_LABEL = "istio.io/rev";
    static final String DEFAULT_VALIDATOR = "istiod-default-validator";
    private static final Backoff RETRY = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(30));

    private final SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject> informer;
    /** tag -> the revision it points at and whether it is served, as last logged, so a change is logged once. */
    private final Map<String, String> reported = new ConcurrentHashMap<>();
    private final InformerController<DynamicKubernetesObject> controller;
    private final SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject> defaultValidator;

    private RevisionTags(KubeClient client) {
        var api = new DynamicKubernetesApi("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
                client.apiClient());
        String name = "mutatingwebhookconfigurations " + REV_LABEL;
        this.informer = new SignallingInformer<>(
                DynamicKubernetesObject.class, ResourceListerWatcher.of(name, api, null, REV_LABEL, null), new Cache<>(),
                client.watchErrorHandler(name));
        this.controller = InformerController.start("revision-tags", informer, RETRY, this::reconcile);
        client.addInformer(name, informer);
        var validating = new DynamicKubernetesApi("admissionregistration.k8s.io", "v1",
                "validatingwebhookconfigurations", client.apiClient());
        String validatorName = "validatingwebhookconfigurations " + DEFAULT_VALIDATOR;
        this.defaultValidator = new SignallingInformer<>(DynamicKubernetesObject.class,
                ResourceListerWatcher.of(validatorName, validating, null, null, "metadata.name=" + DEFAULT_VALIDATOR),
                new Cache<>(), client.watchErrorHandler(validatorName));
        client.addInformer(validatorName, defaultValidator);
    }

    /** Watches the tags with the client's informers (registered now, started with them). */
    public static RevisionTags watch(KubeClient client) {
        return new RevisionTags(client);
    }

    /** The informer's cache is the state (complete before the first reconcile); a change only needs reporting. */
    private Outcome reconcile(String key, DynamicKubernetesObject webhook) {
        report();
        return Outcome.DONE;
    }

    /**
     * Logs each tag whose revision changed, and a warning naming the tag's webhook for a tag
     * whose revision has no injector webhook. istiod itself reports nothing here (only
     * {@code istioctl tag set} refuses an unknown revision); the tag stays as it is, and the
     * other tags and revisions are unaffected.
     */
    private synchronized void report() {
        Map<String, DynamicKubernetesObject> tagWebhooks = new TreeMap<>();
        Set<String> revisions = new HashSet<>();
        for (DynamicKubernetesObject webhook : informer.getIndexer().list()) {
            Map<String, String> labels = labels(webhook);
            String tag = labels.get(TAG_LABEL);
            if (tag == null) {
                revisions.add(labels.getOrDefault(REV_LABEL, ""));
            } else if (!tag.isEmpty()) {
                tagWebhooks.put(tag, webhook);
            }
        }
        reported.keySet().removeIf(tag -> !tagWebhooks.containsKey(tag));
        tagWebhooks.forEach((tag, webhook) -> {
            String revision = labels(webhook).getOrDefault(REV_LABEL, "");
            boolean served = revisions.contains(revision);
            // logged again when the tag moves, or its revision's webhook comes or goes
            String state = served ? revision : revision + " (unserved)";
            if (state.equals(reported.put(tag, state))) {
                return;
            }
            if (served) {
                LOG.log(Level.INFO, "revision tag " + tag + " -> revision " + revision);
            } else {
                LOG.log(Level.WARNING, "MutatingWebhookConfiguration " + webhook.getMetadata().getName()
                        + ": revision tag " + tag + " points at revision " + revision
                        + ", which no injector webhook serves (no MutatingWebhookConfiguration labelled " + REV_LABEL
                        + "=" + revision + " without " + TAG_LABEL + "); pods on the tag are injected by no revision");
            }
        });
    }

    /** Every tag and the revision it points at. */
    public Map<String, String> tags() {
        Map<String, String> tags = new TreeMap<>();
        for (DynamicKubernetesObject webhook : informer.getIndexer().list()) {
            Map<String, String> labels = labels(webhook);
            String tag = labels.get(TAG_LABEL);
            if (tag != null && !tag.isEmpty()) {
                tags.put(tag, labels.getOrDefault(REV_LABEL, ""));
            }
        }
        return tags;
    }

    private static Map<String, String> labels(DynamicKubernetesObject o) {
        Map<String, String> labels = o.getMetadata() == null ? null : o.getMetadata().getLabels();
        return labels == null ? Map.of() : labels;
    }

    /**
     * The revision a value of {@code istio.io/rev} stands for: a tag's revision, else the value
     * itself; for {@code default}, the default tag's revision or, without one, {@code default}.
     */
    @Override
    public String apply(String tagOrRevision) {
        String revision = tags().get(tagOrRevision);
        return revision == null || revision.isEmpty() ? tagOrRevision : revision;
    }

    /** The revision the {@value #DEFAULT_VALIDATOR} webhook names (its {@code istio.io/rev}); empty without one. */
    public String defaultRevision() {
        var webhooks = defaultValidator.getIndexer().list();
        return webhooks.isEmpty() ? "" : labels(webhooks.getFirst()).getOrDefault(REV_LABEL, "");
    }

    /** The first list of webhook configurations has been read. */
    public boolean hasSynced() {
        return controller.hasSynced() && defaultValidator.hasSynced();
    }

    @Override
    public void close() {
        controller.close();
    }
}
