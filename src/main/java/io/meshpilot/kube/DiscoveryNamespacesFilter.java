package io.meshpilot.kube;

import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NamespaceList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.meshpilot.util.LabelSelector;
import java.lang.System.Logger.Level;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

/**
 * The namespaces {@code meshConfig.discoverySelectors} select, kept current from the
 * Namespace informer (istiod's one DiscoveryNamespacesFilter in pkg/kube, shared by every
 * informer that is namespace-scoped). Whoever owns the mesh config sets the selectors;
 * readers ask {@link #selects(String)} and are told which namespaces became selected or
 * deselected, by a namespace's labels changing or by the selectors changing.
 */
public final class DiscoveryNamespacesFilter {
    private static final System.Logger LOG = System.getLogger(DiscoveryNamespacesFilter.class.getName());

    /** Told, outside this filter's lock, which namespaces joined and which left the selection. */
    public interface Handler {
        void membershipChanged(Set<String> selected, Set<String> deselected);
    }

    private final SharedIndexInformer<V1Namespace> namespaces;
    private final List<Handler> handlers = new CopyOnWriteArrayList<>();
    private DiscoveryNamespaces rule = DiscoveryNamespaces.ALL;
    /** Known namespaces the rule selected when last told: what the handlers were told of. */
    private final Set<String> members = new HashSet<>();

    /** Registers (or reuses) the factory's Namespace informer; it starts with the factory. */
    public static DiscoveryNamespacesFilter register(ApiClient client, SharedInformerFactory factory,
                                                     BiConsumer<Class<V1Namespace>, Throwable> errors) {
        return new DiscoveryNamespacesFilter(factory.sharedIndexInformerFor(ResourceListerWatcher.all("Namespace",
                new GenericKubernetesApi<>(V1Namespace.class, V1NamespaceList.class, "", "v1", "namespaces", client)),
                V1Namespace.class, 0, errors));
    }

    private DiscoveryNamespacesFilter(SharedIndexInformer<V1Namespace> namespaces) {
        this.namespaces = namespaces;
        namespaces.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(V1Namespace ns) {
                namespaceChanged(ns.getMetadata().getName());
            }

            @Override
            public void onUpdate(V1Namespace oldNs, V1Namespace ns) {
                namespaceChanged(ns.getMetadata().getName());
            }

            @Override
            public void onDelete(V1Namespace ns, boolean finalStateUnknown) {
                namespaceChanged(ns.getMetadata().getName());
            }
        });
    }

    /** The Namespace informer this filter reads (shared with the other readers of namespaces). */
    public SharedIndexInformer<V1Namespace> informer() {
        return namespaces;
    }

    public void addHandler(Handler handler) {
        handlers.add(handler);
    }

    /** The rule in force now. */
    public synchronized DiscoveryNamespaces rule() {
        return rule;
    }

    /**
     * Whether objects of {@code namespace} are used: every namespace without selectors (even one
     * not listed yet), else only a known namespace the selectors match. Cluster-scoped objects
     * ({@code namespace} empty) always are.
     */
    public boolean selects(String namespace) {
        if (namespace == null || namespace.isEmpty()) {
            return true;
        }
        DiscoveryNamespaces current = rule();
        if (current.selectsAll()) {
            return true;
        }
        // read from the informer's store, which is updated before its handlers run: a reader
        // sees a label change at once, and is told of it right after
        V1Namespace ns = namespaces.getIndexer().getByKey(namespace);
        return ns != null && current.selects(ns.getMetadata().getLabels());
    }

    /** New discoverySelectors: every known namespace is evaluated again. */
    public void setSelectors(List<LabelSelector> selectors) {
        DiscoveryNamespaces next = new DiscoveryNamespaces(selectors);
        Set<String> selected = new HashSet<>();
        Set<String> deselected = new HashSet<>();
        synchronized (this) {
            if (next.equals(rule)) {
                return;
            }
            boolean allBefore = rule.selectsAll();
            rule = next;
            Set<String> before = Set.copyOf(members);
            members.clear();
            for (V1Namespace ns : namespaces.getIndexer().list()) {
                if (next.selects(ns.getMetadata().getLabels())) {
                    members.add(ns.getMetadata().getName());
                }
            }
            // without selectors even unknown namespaces counted as selected; only known ones leave
            for (String ns : members) {
                if (!before.contains(ns)) {
                    selected.add(ns);
                }
            }
            for (String ns : before) {
                if (!members.contains(ns)) {
                    deselected.add(ns);
                }
            }
            if (allBefore) {
                selected.clear();
            }
        }
        LOG.log(Level.INFO, () -> "discoverySelectors changed: " + selectors.size() + " selector(s); namespaces selected "
                + selected + ", deselected " + deselected);
        notifyHandlers(selected, deselected);
    }

    private void namespaceChanged(String name) {
        boolean selectedNow;
        boolean changed;
        synchronized (this) {
            V1Namespace ns = namespaces.getIndexer().getByKey(name);
            selectedNow = ns != null && rule.selects(ns.getMetadata().getLabels());
            changed = selectedNow ? members.add(name) : members.remove(name);
            // without selectors membership only mirrors the namespace list: nothing to tell
            changed &= !rule.selectsAll();
        }
        if (changed) {
            LOG.log(Level.DEBUG, () -> "namespace " + name + (selectedNow ? " selected" : " no longer selected")
                    + " by discoverySelectors");
            notifyHandlers(selectedNow ? Set.of(name) : Set.of(), selectedNow ? Set.of() : Set.of(name));
        }
    }

    private void notifyHandlers(Set<String> selected, Set<String> deselected) {
        if (selected.isEmpty() && deselected.isEmpty()) {
            return;
        }
        for (Handler h : handlers) {
            try {
                h.membershipChanged(Set.copyOf(selected), Set.copyOf(deselected));
            } catch (RuntimeException e) {
                LOG.log(Level.ERROR, "discovery namespace handler failed", e);
            }
        }
    }

    /** For logs: the rule and the known namespaces it selects. */
    @Override
    public synchronized String toString() {
        return rule.selectsAll() ? "all namespaces" : "namespaces " + new TreeSet<>(members);
    }
}
