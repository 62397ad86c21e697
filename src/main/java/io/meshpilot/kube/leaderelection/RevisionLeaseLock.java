package io.meshpilot.kube.leaderelection;

import io.kubernetes.client.extended.leaderelection.LeaderElectionRecord;
import io.kubernetes.client.extended.leaderelection.Lock;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoordinationV1Api;
import io.kubernetes.client.openapi.models.V1Lease;
import io.kubernetes.client.openapi.models.V1LeaseSpec;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.lang.System.Logger.Level;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A Lease lock that also records the holder's revision (annotation {@value #HOLDER_KEY} on the
 * Lease, where istiod's k8sresourcelock.LeaseLock keeps its holder key), for {@link RevisionPriority}: when the priority
 * says this replica takes over from the holder's revision, the record is reported without a
 * holder, so the elector writes itself in at once (over the resourceVersion read, so two
 * contenders cannot both win); the old holder sees another holder at its next renewal and stops
 * its duties within the renew deadline.
 */
final class RevisionLeaseLock implements Lock {
    static final String HOLDER_KEY = "leader.istio.io/holder-key";
    private static final System.Logger LOG = System.getLogger(RevisionLeaseLock.class.getName());

    private final CoordinationV1Api api;
    private final String namespace;
    private final String name;
    private final String identity;
    private final RevisionPriority priority;
    /** The Lease last read or written: its resourceVersion is the precondition of the next update. */
    private final AtomicReference<V1Lease> last = new AtomicReference<>();

    RevisionLeaseLock(ApiClient client, String namespace, String name, String identity, RevisionPriority priority) {
        this.api = new CoordinationV1Api(client);
        this.namespace = namespace;
        this.name = name;
        this.identity = identity;
        this.priority = priority;
    }

    @Override
    public LeaderElectionRecord get() throws ApiException {
        V1Lease lease = api.readNamespacedLease(name, namespace).execute();
        last.set(lease);
        LeaderElectionRecord record = record(lease);
        String holder = record.getHolderIdentity();
        if (holder != null && !holder.isEmpty() && !holder.equals(identity)) {
            String holderRevision = annotations(lease).getOrDefault(HOLDER_KEY, "");
            if (priority.takesOverFrom(holderRevision)) {
                LOG.log(Level.INFO, "leader election " + name + ": revision " + priority.revision()
                        + " is the default; taking the Lease over from " + holder + " (revision "
                        + (holderRevision.isEmpty() ? "unknown" : holderRevision) + ")");
                record.setHolderIdentity(null); // the elector takes a Lease without a holder at once
            }
        }
        return record;
    }

    @Override
    public boolean create(LeaderElectionRecord record) {
        V1Lease lease = new V1Lease().apiVersion("coordination.k8s.io/v1").kind("Lease")
                .metadata(new V1ObjectMeta().name(name).namespace(namespace).annotations(Map.of(HOLDER_KEY, priority.revision())))
                .spec(spec(record));
        try {
            last.set(api.createNamespacedLease(namespace, lease).execute());
            return true;
        } catch (ApiException e) {
            LOG.log(Level.DEBUG, () -> "Lease " + namespace + "/" + name + " not created: HTTP " + e.getCode());
            return false;
        }
    }

    @Override
    public boolean update(LeaderElectionRecord record) {
        V1Lease read = last.get();
        if (read == null) {
            return false;
        }
        Map<String, String> annotations = new HashMap<>(annotations(read));
        annotations.put(HOLDER_KEY, priority.revision());
        V1Lease next = new V1Lease().apiVersion("coordination.k8s.io/v1").kind("Lease")
                .metadata(read.getMetadata().annotations(annotations)).spec(spec(record));
        try {
            last.set(api.replaceNamespacedLease(name, namespace, next).execute());
            return true;
        } catch (ApiException e) {
            LOG.log(Level.DEBUG, () -> "Lease " + namespace + "/" + name + " not updated: HTTP " + e.getCode());
            return false;
        }
    }

    @Override
    public String identity() {
        return identity;
    }

    @Override
    public String describe() {
        return namespace + "/" + name;
    }

    private static Map<String, String> annotations(V1Lease lease) {
        Map<String, String> annotations = lease.getMetadata() == null ? null : lease.getMetadata().getAnnotations();
        return annotations == null ? Map.of() : annotations;
    }

    private static LeaderElectionRecord record(V1Lease lease) {
        V1LeaseSpec spec = lease.getSpec() == null ? new V1LeaseSpec() : lease.getSpec();
        return new LeaderElectionRecord(spec.getHolderIdentity(),
                spec.getLeaseDurationSeconds() == null ? 0 : spec.getLeaseDurationSeconds(),
                date(spec.getAcquireTime()), date(spec.getRenewTime()),
                spec.getLeaseTransitions() == null ? 0 : spec.getLeaseTransitions());
    }

    private static V1LeaseSpec spec(LeaderElectionRecord record) {
        return new V1LeaseSpec().holderIdentity(record.getHolderIdentity())
                .leaseDurationSeconds(record.getLeaseDurationSeconds())
                .acquireTime(time(record.getAcquireTime())).renewTime(time(record.getRenewTime()))
                .leaseTransitions(record.getLeaderTransitions());
    }

    private static Date date(OffsetDateTime t) {
        return t == null ? null : Date.from(t.toInstant());
    }

    private static OffsetDateTime time(Date d) {
        return d == null ? null : OffsetDateTime.ofInstant(d.toInstant(), ZoneOffset.UTC);
    }
}
