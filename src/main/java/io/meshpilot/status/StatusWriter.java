package io.meshpilot.status;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import com.google.protobuf.util.JsonFormat;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.store.ConfigStoreException;
import io.meshpilot.config.store.WritableConfigStore;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.xds.DistributionStatus;
import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * istiod's status controller (pilot/pkg/status, the {@code istio-status-leader} duty): every
 * PILOT_STATUS_UPDATE_INTERVAL it works out each Istio object's status from what MeshPilot
 * already tracks, the distribution to the connected proxies (the same as the REST status API
 * and syncz) and the validation warnings, and writes it through the status subresource only
 * where it differs from what the object has. A pass writes each object at most once, so a
 * burst of changes costs one write per object per interval, and at most a set number of
 * objects, so status never takes the whole request budget the CA's TokenReviews and CSRs and
 * the informers share; the rest are written in the next passes.
 *
 * <p>It runs on the controller kit as istiod's status manager does (a ticker that queues the
 * objects whose status changed, a worker queue keyed by the object that writes them): the
 * periodic pass of the leader's term queues each object whose inputs (revision, distribution,
 * messages) differ from those its status was last found right for, and the reconcile of a key
 * writes that object's status as it stands then.
 *
 * <p>The write replaces the status at the resourceVersion it was computed from; when another
 * writer got in between, the API server refuses it and the object is looked at again once the
 * watch brings the newer revision (istiod also retries later). While no proxy is connected the
 * Reconciled condition is left alone, as istiod does.
 */
public final class StatusWriter {
    private static final System.Logger LOG = System.getLogger(StatusWriter.class.getName());

    private final WritableConfigStore store;
    private final Collection<Schema> schemas;
    private final Function<List<Config>, List<DistributionStatus>> distribution;
    private final PilotFeatures.Status settings;
    /** Writes per pass at most: status shares the client's request budget with the CA and the informers. */
    private final int writesPerPass;
    /** Revisions a write of was refused (conflict, invalid): not tried again until the object changes. */
    private final Map<ConfigKey, String> refusedAt = new ConcurrentHashMap<>();
    /** Validation messages per object, kept while its spec is the same. */
    private final Map<ConfigKey, Analyzed> analyzed = new ConcurrentHashMap<>();

    private record Analyzed(Message spec, List<ValidationMessage> messages) {
    }

    /** What an object's status was last worked out from: while all of it is the same, so is the answer. */
    private record Inputs(String resourceVersion, Progress progress, List<ValidationMessage> messages) {
    }

    /** Per object, the inputs of the last pass that found its status as it should be. */
    private final Map<ConfigKey, Inputs> settled = new ConcurrentHashMap<>();
    /** Whether the last write failed for want of an answer (logged once until one succeeds). */
    private volatile boolean unreachable;
    /** The writer's keyed queue: one object's status per key, written on its worker thread. */
    private final ControllerQueue<ConfigKey> queue;
    /** Writes since the last pass; the queue's worker alone touches this and the next. */
    private int writtenThisPass;
    /** The API server did not answer a write since the last pass: the rest waits for the next. */
    private boolean writesRefusedThisPass;

    /**
     * @param store        the store of the cluster's custom resources (writes go to their status subresource)
     * @param schemas      the kinds to look at: those of istiod's groups ({@code *.istio.io})
     * @param distribution where objects stand with the proxies (the discovery server's status)
     * @param writesPerPass the most status writes one pass sends; the others wait for the next pass
     */
    public StatusWriter(WritableConfigStore store, Collection<Schema> schemas,
                        Function<List<Config>, List<DistributionStatus>> distribution, PilotFeatures.Status settings,
                        int writesPerPass) {
        if (writesPerPass < 1) {
            throw new IllegalArgumentException("status writes per pass must be at least 1, not " + writesPerPass);
        }
        this.writesPerPass = writesPerPass;
        this.store = store;
        this.schemas = schemas.stream().filter(s -> s.group().endsWith("istio.io")).toList();
        this.distribution = distribution;
        this.settings = settings;
        // the periodic pass queues each changed object again, so a failed write waits for it
        this.queue = new ControllerQueue<>("status-writer", Backoff.fixed(settings.updateInterval()), this::reconcile);
    }

    /**
     * The leader duty: a term of the writer's queue, whose periodic pass queues every
     * PILOT_STATUS_UPDATE_INTERVAL the objects whose status may differ, until the returned
     * handle is closed (a write under way is interrupted and waited for).
     */
    public AutoCloseable lead() {
        LOG.log(Level.INFO, "status writer: leading; Reconciled=" + settings.reconciled() + " validationMessages="
                + settings.analysis() + " every " + settings.updateInterval().toMillis() + "ms");
        ControllerQueue<ConfigKey>.Term term = queue.start(CompletableFuture.completedFuture(null), this::queueChanged,
                () -> LOG.log(Level.INFO, "status writer: stopped"));
        term.every(settings.updateInterval(), this::queueChanged);
        return term;
    }

    /**
     * The periodic pass (istiod's ticker): opens a new write budget and queues the objects whose
     * inputs changed since their status was last found right. Objects pushed in the same
     * version share one list of proxy states, counted once.
     */
    private void queueChanged() {
        try {
            List<Config> objects = objects();
            Set<ConfigKey> present = new HashSet<>();
            objects.forEach(c -> present.add(c.key()));
            refusedAt.keySet().retainAll(present);
            analyzed.keySet().retainAll(present);
            settled.keySet().retainAll(present);
            List<DistributionStatus> distributed = settings.reconciled() ? distribution.apply(objects) : null;
            Map<List<DistributionStatus.ProxyStatus>, Progress> counted = new IdentityHashMap<>();
            writtenThisPass = 0;
            writesRefusedThisPass = false;
            for (int i = 0; i < objects.size(); i++) {
                Config c = objects.get(i);
                DistributionStatus d = distributed == null ? null : distributed.get(i);
                Inputs inputs = inputs(c, d == null ? null : counted.computeIfAbsent(d.proxies(), p -> Progress.of(d)));
                if (inputs != null && !inputs.equals(settled.get(c.key()))) {
                    queue.add(c.key());
                }
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "status writer pass failed: " + e);
        }
    }

    private List<Config> objects() {
        List<Config> objects = new ArrayList<>();
        for (Schema s : schemas) {
            objects.addAll(store.list(s.kind(), null));
        }
        return objects;
    }

    /**
     * What the status of {@code c} is worked out from, {@code progress} being its distribution
     * (null: not reported); null when there is nothing to write: a write of this revision was
     * refused, or neither Reconciled nor validation messages have anything to say now.
     */
    private Inputs inputs(Config c, Progress progress) {
        if (c.resourceVersion().equals(refusedAt.get(c.key()))) {
            return null;
        }
        List<ValidationMessage> messages = settings.analysis() ? messages(c) : null;
        if (progress == null && messages == null) {
            return null; // nothing of ours to say about it now
        }
        return new Inputs(c.resourceVersion(), progress, messages);
    }

    /** Where {@code c} stands with the proxies; null when not reported or no proxy is connected. */
    private Progress progress(Config c) {
        if (!settings.reconciled()) {
            return null;
        }
        DistributionStatus d = distribution.apply(List.of(c)).get(0);
        return d.proxies().isEmpty() ? null : Progress.of(d);
    }

    /**
     * Writes the status of one object as it is now, when it differs from what it should be,
     * within the pass's budget; what is not written now is queued again by the next pass.
     */
    private Outcome reconcile(ConfigKey key) {
        if (writesRefusedThisPass || writtenThisPass >= writesPerPass) {
            return Outcome.DONE; // the next pass queues it again
        }
        Config c = store.get(key.kind(), key.namespace(), key.name()).orElse(null);
        Inputs inputs = c == null ? null : inputs(c, progress(c));
        if (inputs == null || inputs.equals(settled.get(key))) {
            return Outcome.DONE;
        }
        JsonObject current = json(c.status());
        JsonObject desired = IstioStatus.desired(current, c.generation(), inputs.progress(), inputs.messages(),
                Instant.now());
        if (desired.equals(current)) {
            settled.put(key, inputs);
            return Outcome.DONE;
        }
        try {
            store.updateStatus(c.withStatus(struct(desired)));
            writtenThisPass++;
            if (unreachable) {
                unreachable = false;
                LOG.log(Level.INFO, "status writer: the API server takes status writes again");
            }
        } catch (ConfigStoreException.Conflict | ConfigStoreException.NotFound | ConfigStoreException.Invalid
                 | ConfigStoreException.ReadOnly e) {
            // someone else wrote it, it is gone, or refused: the next revision is looked at again
            refusedAt.put(key, c.resourceVersion());
            LOG.log(Level.DEBUG, () -> "status of " + key + " not written: " + e.getMessage());
        } catch (ConfigStoreException e) {
            // the API server is not answering: the rest waits for the next pass (logged once per outage)
            writesRefusedThisPass = true;
            if (!unreachable) {
                unreachable = true;
                LOG.log(Level.WARNING, "status of " + key + " not written, trying again every "
                        + settings.updateInterval().toMillis() + "ms: " + e.getMessage());
            }
        }
        return Outcome.DONE;
    }

    private List<ValidationMessage> messages(Config c) {
        Analyzed a = analyzed.get(c.key());
        if (a != null && a.spec().equals(c.spec())) {
            return a.messages();
        }
        Schema schema = schemas.stream().filter(s -> s.kind().equals(c.gvk().kind())).findFirst().orElseThrow();
        Validation v = new Validation();
        schema.validator().validate(c, v);
        List<ValidationMessage> messages = v.result().warnings().stream().map(ValidationMessage::schemaWarning).toList();
        analyzed.put(c.key(), new Analyzed(c.spec(), messages));
        return messages;
    }

    private static JsonObject json(Struct status) {
        try {
            return JsonParser.parseString(JsonFormat.printer().print(status)).getAsJsonObject();
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException(e); // a Struct always prints
        }
    }

    private static Struct struct(JsonObject status) {
        Struct.Builder b = Struct.newBuilder();
        try {
            JsonFormat.parser().merge(status.toString(), b);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException(e); // JSON always parses into a Struct
        }
        return b.build();
    }
}
