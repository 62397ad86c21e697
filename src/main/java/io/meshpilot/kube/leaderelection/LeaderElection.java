package io.meshpilot.kube.leaderelection;

import io.meshpilot.kube.ElectionTimings;
import io.kubernetes.client.extended.leaderelection.LeaderElectionConfig;
import io.kubernetes.client.extended.leaderelection.LeaderElector;
import io.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.kubernetes.client.openapi.ApiClient;
import io.meshpilot.kube.KubeErrors;
import io.meshpilot.kube.OneLineLibraryLog;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One of istiod's leader elections (pilot/pkg/leaderelection): replicas compete for a
 * {@code coordination.k8s.io/v1} Lease named after the election in istiod's namespace; the
 * holder runs the election's duties, the others wait. A holder that cannot renew within the
 * renew deadline stops its duties and competes again, so by the time another replica can
 * take the Lease (a whole lease duration without renewal) the old one has stopped. As in
 * istiod, the Lease is not released on shutdown: the next leader waits out the lease duration.
 */
public final class LeaderElection implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(LeaderElection.class.getName());

    static {
        // client-java's elector and lock log a failed Lease request with its whole stack at every
        // retry; client-go's (istiod's) log one line: "error retrieving resource lock ...: ..."
        OneLineLibraryLog.install(LeaderElector.class, LeaseLock.class);
    }

    /** istiod's election names: the Lease each election competes for. */
    public static final String NAMESPACE_CONTROLLER = "istio-namespace-controller-election";
    public static final String STATUS_CONTROLLER = "istio-status-leader";
    public static final String GATEWAY_STATUS_CONTROLLER = "istio-gateway-status-leader";
    public static final String ANALYZE_CONTROLLER = "istio-analyze-leader";
    public static final String INGRESS_CONTROLLER = "istio-leader";
    /** istiod's Lease for its validation controller before per-revision validating webhooks (istio#33044). */
    public static final String VALIDATION_CONTROLLER = "istio-validation-controller-election";

    /** Work only the leader may do: started when leading, the returned handle closed when not. */
    @FunctionalInterface
    public interface Duty {
        AutoCloseable lead() throws Exception;
    }

    private final ApiClient client;
    private final String namespace;
    private final String electionName;
    private final String identity;
    private final ElectionTimings timings;
    /** PRIORITIZED_LEADER_ELECTION: the default revision takes the Lease over; null: first come, first served. */
    private final RevisionPriority priority;
    private final Map<String, Duty> duties = new LinkedHashMap<>();
    private final List<AutoCloseable> running = new ArrayList<>();
    private Thread thread;
    private volatile LeaderElector elector;
    private volatile boolean closed;
    private boolean leading;

    /**
     * @param namespace    where the Lease lives (istiod's namespace)
     * @param electionName the Lease's name, one of istiod's (e.g. {@link #NAMESPACE_CONTROLLER});
     *                     per-revision elections name it with {@link #perRevision}
     * @param identity     this replica's name in the Lease's holderIdentity (istiod: $POD_NAME)
     */
    public LeaderElection(ApiClient client, String namespace, String electionName, String identity, ElectionTimings timings) {
        this(client, namespace, electionName, identity, timings, null);
    }

    /**
     * @param priority istiod's PRIORITIZED_LEADER_ELECTION: every revision competes for the
     *                 Lease, the holder's revision is recorded on it, and a replica of the
     *                 default revision takes it from another revision; null for none
     */
    public LeaderElection(ApiClient client, String namespace, String electionName, String identity, ElectionTimings timings,
                          RevisionPriority priority) {
        this.client = client;
        this.namespace = namespace;
        this.electionName = electionName;
        this.identity = identity;
        this.timings = timings;
        this.priority = priority;
    }

    /** istiod's per-revision election: one leader per control-plane revision ("default" when unset). */
    public static String perRevision(String electionName, String revision) {
        return electionName + "-" + (revision == null || revision.isEmpty() ? "default" : revision);
    }

    /** Adds a duty; call before {@link #start()}. */
    public synchronized LeaderElection addDuty(String name, Duty duty) {
        duties.put(name, duty);
        return this;
    }

    /** Competes for the Lease on a thread of its own until closed. Returns what the start-up log says. */
    public synchronized String start() {
        if (thread != null || closed) {
            throw new IllegalStateException("leader election " + electionName + " already started or closed");
        }
        thread = Thread.ofPlatform().daemon().name("leader-election-" + electionName).start(this::compete);
        return "election " + namespace + "/" + electionName + " as " + identity
                + (priority == null ? "" : " revision=" + priority.revision() + " (prioritized)") + " duties=" + duties.keySet()
                + " lease=" + timings.leaseDuration().toMillis() + "ms";
    }

    /** Whether this replica runs the duties now. */
    public synchronized boolean leading() {
        return leading;
    }

    public String name() {
        return electionName;
    }

    private void compete() {
        while (!closed) {
            LeaderElector next = new LeaderElector(new LeaderElectionConfig(
                    priority == null ? new LeaseLock(namespace, electionName, identity, client)
                            : new RevisionLeaseLock(client, namespace, electionName, identity, priority),
                    timings.leaseDuration(), timings.renewDeadline(), timings.retryPeriod()),
                    // an attempt to acquire that threw or outlasted the retry period (the elector logs failed requests itself)
                    error -> LOG.log(Level.ERROR, "leader election " + electionName + ": acquiring or renewing the Lease "
                            + namespace + "/" + electionName + " failed: " + KubeErrors.oneLine(error)));
            elector = next;
            // the elector starts the duties on a thread of its own: a start that comes after this
            // round ended (renewal failed at once) must not start them
            AtomicBoolean roundOver = new AtomicBoolean();
            try {
                // returns when leadership is lost (or never won because this election closed)
                next.run(() -> startLeading(roundOver), this::stopLeading);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "leader election " + electionName + " failed: " + KubeErrors.oneLine(e));
            } finally {
                synchronized (this) {
                    roundOver.set(true);
                }
                stopLeading();
                next.close();
            }
            if (!closed) {
                // istiod: "Leader election cycle N lost. Trying again", at INFO
                LOG.log(Level.INFO, "leader election " + electionName + ": lease lost, competing again");
                try {
                    Thread.sleep(timings.retryPeriod().toMillis());
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private synchronized void startLeading(AtomicBoolean roundOver) {
        if (closed || leading || roundOver.get()) {
            return;
        }
        leading = true;
        LOG.log(Level.INFO, "leader election " + electionName + ": " + identity + " leads; starting " + duties.keySet());
        duties.forEach((name, duty) -> {
            try {
                running.add(duty.lead());
            } catch (Exception e) {
                LOG.log(Level.ERROR, "leader duty " + name + " failed to start: " + KubeErrors.oneLine(e));
                LOG.log(Level.DEBUG, "leader duty " + name + " failed to start", e);
            }
        });
    }

    private synchronized void stopLeading() {
        if (!leading) {
            return;
        }
        leading = false;
        LOG.log(Level.INFO, "leader election " + electionName + ": " + identity + " stopped leading; stopping "
                + duties.keySet());
        for (int i = running.size() - 1; i >= 0; i--) {
            try {
                running.get(i).close();
            } catch (Exception e) {
                LOG.log(Level.WARNING, "stopping leader duty failed: " + e.getMessage());
            }
        }
        running.clear();
    }

    /** Stops the duties at once and stops competing; the Lease expires by itself. */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            t = thread;
        }
        stopLeading();
        LeaderElector e = elector;
        if (e != null) {
            e.close();
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(timings.renewDeadline().toMillis());
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
