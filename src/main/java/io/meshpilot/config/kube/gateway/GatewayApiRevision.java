package io.meshpilot.config.kube.gateway;

import io.meshpilot.config.ConfigRevision;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Which Gateway API objects a control plane of one revision reads and writes status for.
 * Statuses go by istiod's tag watcher ({@code IsMine}, pkg/revisions/tag_watcher.go): the
 * {@code istio.io/rev} label of the object, else of its namespace, names this revision or a
 * revision tag pointing at it; an object with neither belongs to the revision the {@code default}
 * tag points at, else to the default revision the {@code istiod-default-validator} webhook names,
 * else to the revision named {@code default}; an object whose namespace is not known (a
 * cluster-scoped GatewayClass) is everyone's. The kinds but Gateway are read with istiod's
 * {@code LabelsInRevision} ({@link ConfigRevision}): unlabelled objects by every revision.
 * Gateways are read by every revision (see {@link GatewayApiInformers}).
 *
 * @param revision        this control plane's revision; empty for the default one
 * @param tagRevisions    resolves a revision tag to the revision it points at (anything else to itself)
 * @param defaultRevision the revision the {@code istiod-default-validator} webhook names; empty without one
 */
public record GatewayApiRevision(String revision, UnaryOperator<String> tagRevisions, Supplier<String> defaultRevision) {
    public static final GatewayApiRevision DEFAULT = new GatewayApiRevision("", UnaryOperator.identity());
    private static final String DEFAULT_TAG = "default";

    public GatewayApiRevision {
        revision = revision == null ? "" : revision;
    }

    /** Without a default-revision webhook to read. */
    public GatewayApiRevision(String revision, UnaryOperator<String> tagRevisions) {
        this(revision, tagRevisions, () -> "");
    }

    private String self() {
        return revision.isEmpty() ? DEFAULT_TAG : revision;
    }

    /** istiod's GetMyTags().Contains: this revision's name, or a tag pointing at it. */
    private boolean myTag(String tagOrRevision) {
        return tagOrRevision.equals(self()) || tagRevisions.apply(tagOrRevision).equals(self());
    }

    /**
     * Whether an object labelled {@code labels}, in a namespace labelled {@code namespaceLabels}
     * (null when the namespace is not known), is this revision's (istiod's IsMine).
     */
    public boolean isMine(Map<String, String> labels, Map<String, String> namespaceLabels) {
        String selected = labels.get(ConfigRevision.LABEL);
        if (selected == null) {
            if (namespaceLabels == null) {
                return true;
            }
            selected = namespaceLabels.getOrDefault(ConfigRevision.LABEL, "");
        }
        if (!selected.isEmpty()) {
            return myTag(selected);
        }
        if (myTag(DEFAULT_TAG)) {
            return true;
        }
        // a default tag pointing elsewhere takes precedence over the default revision
        boolean otherDefaultTag = !tagRevisions.apply(DEFAULT_TAG).equals(DEFAULT_TAG);
        return !otherDefaultTag && defaultRevision.get().equals(self());
    }

    /** Whether a non-Gateway object labelled {@code labels} is read (istiod's LabelsInRevision). */
    public boolean reads(Map<String, String> labels) {
        return new ConfigRevision(revision).selects(labels);
    }
}
