package io.meshpilot.config.kube.gateway;

import io.meshpilot.config.ConfigRevision;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Which Gateway API objects a control plane of one revision reads and writes status for.
 * Gateways, and every object's status, go by istiod's tag watcher ({@code IsMine},
 * pkg/revisions/tag_watcher.go): the {@code istio.io/rev} label of the object, else of its
 * namespace, names a revision or a revision tag that must resolve to this one; an object with
 * neither belongs to the default revision. The other kinds are read with istiod's
 * {@code LabelsInRevision} ({@link ConfigRevision}): unlabelled objects by every revision.
 * Unlike istiod, the default revision is the one without a revision or named {@code default}
 * (istiod also asks the default-revision validating webhook and the {@code default} tag).
 *
 * @param revision     this control plane's revision; empty for the default one
 * @param tagRevisions resolves a revision tag to the revision it points at (anything else to itself)
 */
public record GatewayApiRevision(String revision, UnaryOperator<String> tagRevisions) {
    public static final GatewayApiRevision DEFAULT = new GatewayApiRevision("", UnaryOperator.identity());

    public GatewayApiRevision {
        revision = revision == null ? "" : revision;
    }

    private String self() {
        return revision.isEmpty() ? "default" : revision;
    }

    /**
     * Whether an object labelled {@code labels}, in a namespace labelled {@code namespaceLabels}
     * (empty when unknown), is this revision's (istiod's IsMine).
     */
    public boolean isMine(Map<String, String> labels, Map<String, String> namespaceLabels) {
        String selected = labels.get(ConfigRevision.LABEL);
        if (selected == null) {
            selected = namespaceLabels.getOrDefault(ConfigRevision.LABEL, "");
        }
        if (selected.isEmpty()) {
            return self().equals("default");
        }
        return selected.equals(self()) || tagRevisions.apply(selected).equals(self());
    }

    /** Whether a non-Gateway object labelled {@code labels} is read (istiod's LabelsInRevision). */
    public boolean reads(Map<String, String> labels) {
        return new ConfigRevision(revision).selects(labels);
    }
}
