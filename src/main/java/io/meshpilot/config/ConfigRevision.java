package io.meshpilot.config;

import java.util.Map;

/**
 * Which config objects a control plane of {@code revision} reads, by their {@code istio.io/rev}
 * label, as istiod's {@code LabelsInRevision} (pkg/config/model.go) that its crdclient
 * composes into every Istio kind's informer filter: an unlabelled object belongs to every
 * revision; a labelled one only to the revision it names. A control plane without a revision
 * (the default install) reads every object. The label is compared with the revision itself,
 * not with the revision tags pointing at it: istiod's crdclient does not consult its tag
 * watcher.
 *
 * @param revision the control plane's revision ($REVISION); empty for the default one
 */
public record ConfigRevision(String revision) {
    public static final String LABEL = "istio.io/rev";
    /** A control plane without a revision: reads every object. */
    public static final ConfigRevision ANY = new ConfigRevision("");

    public ConfigRevision {
        revision = revision == null ? "" : revision;
    }

    /** Whether an object with {@code labels} (null: none) is this revision's to read. */
    public boolean selects(Map<String, String> labels) {
        String label = labels == null ? null : labels.get(LABEL);
        return label == null || revision.isEmpty() || label.equals(revision);
    }
}
