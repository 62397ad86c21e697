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
import io.meshpilot.xds.DistributionStatus;
import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
    }

    /** The leader duty: writes every interval until the returned handle is closed. */
    public AutoCloseable lead() {
        Thread thread = Thread.ofPlatform().daemon().name("status-writer").start(this::run);
        return () -> {
            thread.interrupt();
            thread.join(settings.updateInterval().toMillis() + 5_000);
        };
    }

    private void run() {
        LOG.log(Level.INFO, "status writer: leading; Reconciled=" + settings.reconciled() + " validationMessages="
                + settings.analysis() + " every " + settings.updateInterval().toMillis() + "ms");
        while (!Thread.currentThread().isInterrupted()) {
            try {
                writeChanged();
                Thread.sleep(settings.updateInterval().toMillis());
            } catch (InterruptedException e) {
                break;
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "status writer pass failed: " + e);
            }
        }
        LOG.log(Level.INFO, "status writer: stopped");
    }

    /** One pass: writes the objects whose status is not what it should be. Returns how many were written. */
    public int writeChanged() {
        List<Config> objects = new ArrayList<>();
        for (Schema s : schemas) {
            objects.addAll(store.list(s.kind(), null));
        }
        Set<ConfigKey> present = new java.util.HashSet<>();
        objects.forEach(c -> present.add(c.key()));
        refusedAt.keySet().retainAll(present);
        analyzed.keySet().retainAll(present);
        settled.keySet().retainAll(present);
        List<DistributionStatus> distributed = settings.reconciled() ? distribution.apply(objects) : null;
        // objects pushed in the same version share one list of proxy states: counted once
        Map<List<DistributionStatus.ProxyStatus>, Progress> counted = new java.util.IdentityHashMap<>();
        Instant now = Instant.now();
        int written = 0;
        for (int i = 0; i < objects.size() && written < writesPerPass; i++) {
            Config c = objects.get(i);
            if (c.resourceVersion().equals(refusedAt.get(c.key()))) {
                continue;
            }
            Progress progress = null;
            if (distributed != null && !distributed.get(i).proxies().isEmpty()) {
                DistributionStatus d = distributed.get(i);
                progress = counted.computeIfAbsent(d.proxies(), p -> Progress.of(d));
            }
            List<ValidationMessage> messages = settings.analysis() ? messages(c) : null;
            if (progress == null && messages == null) {
                continue; // nothing of ours to say about it now
            }
            Inputs inputs = new Inputs(c.resourceVersion(), progress, messages);
            if (inputs.equals(settled.get(c.key()))) {
                continue;
            }
            JsonObject current = json(c.status());
            JsonObject desired = IstioStatus.desired(current, c.generation(), progress, messages, now);
            if (desired.equals(current)) {
                settled.put(c.key(), inputs);
                continue;
            }
            try {
                store.updateStatus(c.withStatus(struct(desired)));
                written++;
                if (unreachable) {
                    unreachable = false;
                    LOG.log(Level.INFO, "status writer: the API server takes status writes again");
                }
            } catch (ConfigStoreException.Conflict | ConfigStoreException.NotFound | ConfigStoreException.Invalid
                     | ConfigStoreException.ReadOnly e) {
                // someone else wrote it, it is gone, or refused: the next revision is looked at again
                refusedAt.put(c.key(), c.resourceVersion());
                LOG.log(Level.DEBUG, () -> "status of " + c.key() + " not written: " + e.getMessage());
            } catch (ConfigStoreException e) {
                // the API server is not answering: the rest waits for the next pass (logged once per outage)
                if (!unreachable) {
                    unreachable = true;
                    LOG.log(Level.WARNING, "status of " + c.key() + " not written, trying again every "
                            + settings.updateInterval().toMillis() + "ms: " + e.getMessage());
                }
                break;
            }
        }
        return written;
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
