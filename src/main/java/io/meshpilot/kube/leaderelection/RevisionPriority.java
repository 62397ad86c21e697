package io.meshpilot.kube.leaderelection;

import java.util.function.Supplier;

/**
 * istiod's PRIORITIZED_LEADER_ELECTION (LocationPrioritizedComparison without remote
 * clusters): every revision competes for the same Lease, and a replica of the default
 * revision takes it from a holder of another revision instead of waiting for it to expire;
 * replicas of one revision never take it from each other.
 *
 * @param revision        this replica's revision ("default" when unset)
 * @param defaultRevision which revision is the default now ("" when none is marked), asked only
 *                        when the holder's revision differs
 */
public record RevisionPriority(String revision, Supplier<String> defaultRevision) {
    public RevisionPriority {
        revision = revision == null || revision.isEmpty() ? "default" : revision;
    }

    /** Whether this replica takes the Lease from a live holder of {@code holderRevision}. */
    public boolean takesOverFrom(String holderRevision) {
        if (revision.equals(holderRevision)) {
            return false;
        }
        String current = defaultRevision.get();
        return current != null && !current.isEmpty() && current.equals(revision);
    }
}
