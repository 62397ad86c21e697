package io.meshpilot.security.ca;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1SecretList;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.kube.controllers.InformerController;
import io.meshpilot.kube.KubeClient;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The CA root in Kubernetes mode, kept where istiod keeps it, in Secrets of istiod's namespace:
 * a plugged-in CA from {@code cacerts} (istiod's keys, or the {@code tls.crt}/{@code tls.key}/
 * {@code ca.crt} form) when that Secret exists, else the self-signed root in
 * {@code istio-ca-secret} ({@code ca-cert.pem}, {@code ca-key.pem}, and the empty
 * {@code cert-chain.pem}, {@code key.pem}, {@code root-cert.pem} istiod writes).
 *
 * <p>Replicas share it: the first root is created with a create (POST), so when two replicas
 * start together the API server lets exactly one create win (409 AlreadyExists for the other,
 * which then reads the winner's); a rotation is written with an update carrying the
 * resourceVersion it was computed from, so a replica that lost that race (409 Conflict)
 * re-reads and adopts the other's root. {@code root-cert.pem} holds, besides the current root,
 * earlier roots of the same key still valid after a rotation (istiod leaves it empty; an empty
 * one reads the same).
 *
 * <p>There is no local fallback: a root kept anywhere else would not be shared, and two
 * replicas could each mint their own. As istiod's self-signed CA, start-up asks again with a
 * bounded backoff while the API server does not answer, istiod's namespace does not exist yet,
 * or the API refuses (RBAC applied after the Deployment), and fails once the budget is spent,
 * naming the last error. A Secret that answers but holds a damaged root fails at once: asking
 * again would not repair it.
 */
public final class KubeSecretCaRootStore implements CaRootStore {
    public static final String SELF_SIGNED_SECRET = "istio-ca-secret";
    public static final String PLUGGED_IN_SECRET = "cacerts";
    /** istiod's type for istio-ca-secret. */
    public static final String SECRET_TYPE = "istio.io/ca-root";
    static final String CA_CERT = "ca-cert.pem";
    static final String CA_KEY = "ca-key.pem";
    static final String CERT_CHAIN = "cert-chain.pem";
    static final String PRIVATE_KEY = "key.pem";
    static final String ROOT_CERT = "root-cert.pem";
    /** Rounds of read-then-write before giving up when others keep changing the Secret. */
    private static final int ATTEMPTS = 5;

    private static final System.Logger LOG = System.getLogger(KubeSecretCaRootStore.class.getName());
    /** A cacerts change whose handling throws is tried again after this. */
    private static final Backoff PLUGGED_IN_RETRY = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(30));

    private final KubeClient client;
    private final CoreV1Api api;
    private final String namespace;
    private final Path selfSignedLabel;
    private final Path pluggedInLabel;
    private final BoundedBackoff startRetry;

    /**
     * @param namespace  istiod's namespace (POD_NAMESPACE), where both Secrets live
     * @param startRetry how start-up asks again while the Secrets cannot be read or created
     */
    public KubeSecretCaRootStore(KubeClient client, String namespace, BoundedBackoff startRetry) {
        this.client = client;
        this.startRetry = startRetry;
        this.api = new CoreV1Api(client.apiClient());
        this.namespace = namespace;
        this.selfSignedLabel = Path.of("Secret " + namespace + "/" + SELF_SIGNED_SECRET);
        this.pluggedInLabel = Path.of("Secret " + namespace + "/" + PLUGGED_IN_SECRET);
    }

    @Override
    public Optional<CaMaterial> pluggedIn(Clock clock) {
        Optional<V1Secret> secret = retrying(pluggedInLabel, () -> read(PLUGGED_IN_SECRET, pluggedInLabel));
        if (secret.isEmpty()) {
            return Optional.empty();
        }
        Map<String, String> data = texts(secret.get());
        if (!CaLoader.hasPluggedIn(data)) {
            LOG.log(Level.WARNING, pluggedInLabel + " holds no CA certificate or key (keys " + data.keySet()
                    + "); using the self-signed root in " + selfSignedLabel);
            return Optional.empty();
        }
        return Optional.of(CaLoader.loadPluggedIn(data, pluggedInLabel, clock));
    }

    @Override
    public AutoCloseable watchPluggedIn(CaMaterial current, Consumer<CaMaterial> onChange) {
        if (!current.origin().dir().equals(pluggedInLabel)) {
            return () -> { };
        }
        String informerName = "secret " + namespace + "/" + PLUGGED_IN_SECRET;
        var informer = client.namedObjectInformer(informerName, V1Secret.class,
                V1SecretList.class, "secrets", namespace, PLUGGED_IN_SECRET);
        InformerController<V1Secret> controller = InformerController.start(informerName, informer, PLUGGED_IN_RETRY,
                (key, secret) -> {
                    if (secret == null) {
                        LOG.log(Level.WARNING, pluggedInLabel + " deleted; the CA keeps signing with the plugged-in CA it has");
                    } else {
                        changed(secret, onChange);
                    }
                    return Outcome.DONE;
                });
        client.addInformer(informerName, informer);
        return () -> {
            controller.close();
            client.removeInformer(informerName);
        };
    }

    /** A cacerts change: passed on when it loads, else one ERROR line and the current CA stays. */
    private void changed(V1Secret secret, Consumer<CaMaterial> onChange) {
        try {
            onChange.accept(CaLoader.loadPluggedIn(texts(secret), pluggedInLabel, Clock.systemUTC()));
        } catch (CaLoadException e) {
            LOG.log(Level.ERROR, "rejected the change to " + pluggedInLabel + ", the CA keeps the one it has: "
                    + e.getMessage());
        }
    }

    @Override
    public CaMaterial loadOrCreate(SelfSignedOptions options, Clock clock) {
        return retrying(selfSignedLabel, () -> loadOrCreateOnce(options, clock));
    }

    private CaMaterial loadOrCreateOnce(SelfSignedOptions options, Clock clock) {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            Optional<V1Secret> existing = read(SELF_SIGNED_SECRET, selfSignedLabel);
            if (existing.isEmpty()) {
                Optional<CaMaterial> created = create(options, clock.instant());
                if (created.isPresent()) {
                    return created.get();
                }
                continue; // another replica created it first: read theirs
            }
            Instant now = clock.instant();
            CaMaterial kept = parse(existing.get(), now);
            if (now.isBefore(kept.signingCertificate().getNotAfter().toInstant())) {
                return kept;
            }
            CaMaterial renewed = SelfSignedRoot.reissue(kept, options.ttl(), now);
            if (replace(existing.get(), renewed)) {
                LOG.log(Level.WARNING, "self-signed root in " + selfSignedLabel + " expired at "
                        + kept.signingCertificate().getNotAfter().toInstant() + "; re-issued it with the same key");
                return renewed;
            }
        }
        throw new CaLoadException(selfSignedLabel, "kept changing while " + ATTEMPTS + " attempts to read or create it ran");
    }

    @Override
    public Optional<CaMaterial> checkRotation(CaMaterial current, SelfSignedRootRotator rotator, Instant now) {
        if (!current.origin().dir().equals(selfSignedLabel)) {
            return Optional.empty(); // a plugged-in CA is not rotated here
        }
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            V1Secret secret = read(SELF_SIGNED_SECRET, selfSignedLabel).orElseThrow(() -> new CaLoadException(
                    selfSignedLabel, "deleted while this instance runs; not recreating it (restart to create a new root)"));
            CaMaterial kept = parse(secret, now);
            if (!Arrays.equals(kept.signingKey().getEncoded(), current.signingKey().getEncoded())) {
                throw new CaLoadException(selfSignedLabel.resolve(CA_KEY), "changed while this instance runs; "
                        + "not rotating over it (restart to load the new root)");
            }
            boolean adopted = !kept.signingCertificate().equals(current.signingCertificate());
            Optional<CaMaterial> rotated = rotator.rotateIfDue(adopted ? kept : current, now);
            if (rotated.isEmpty()) {
                return adopted ? Optional.of(kept) : Optional.empty();
            }
            if (replace(secret, rotated.get())) {
                return rotated;
            }
        }
        throw new CaLoadException(selfSignedLabel, "kept changing while " + ATTEMPTS + " rotation attempts ran");
    }

    @Override
    public String describe() {
        return selfSignedLabel + " (plugged-in from " + pluggedInLabel + " when it exists)";
    }

    /** Creates istio-ca-secret with a new root; empty when another replica created it first (409). */
    private Optional<CaMaterial> create(SelfSignedOptions options, Instant now) {
        KeyPair pair = options.generateKeyPair();
        X509Certificate cert = SelfSignedRoot.issue(pair.getPublic(), pair.getPrivate(),
                SelfSignedRoot.subjectFor(options.org()), options.ttl(), now);
        CaMaterial material = new CaMaterial(cert, pair.getPrivate(), List.of(), List.of(cert),
                new CaMaterial.Origin(CaMaterial.Kind.SELF_SIGNED, selfSignedLabel));
        V1Secret secret = new V1Secret().metadata(new V1ObjectMeta().name(SELF_SIGNED_SECRET).namespace(namespace))
                .type(SECRET_TYPE).data(data(material));
        try {
            api.createNamespacedSecret(namespace, secret).execute();
        } catch (ApiException e) {
            if (e.getCode() == 409) {
                LOG.log(Level.INFO, selfSignedLabel + " was created by another replica meanwhile; using its root");
                return Optional.empty();
            }
            if (e.getCode() == 404) {
                throw new CaLoadException(selfSignedLabel, "cannot be created: namespace " + namespace
                        + " does not exist (istiod's namespace is created before istiod starts)", e);
            }
            throw apiError(selfSignedLabel, "cannot be created", e);
        }
        LOG.log(Level.INFO, "created a self-signed root CA in " + selfSignedLabel + ": " + cert.getSubjectX500Principal()
                + " until " + cert.getNotAfter().toInstant());
        return Optional.of(material);
    }

    /** Writes a re-issued root over the version read; false when someone changed it since (409). */
    private boolean replace(V1Secret read, CaMaterial rotated) {
        Map<String, byte[]> data = new LinkedHashMap<>(read.getData() == null ? Map.of() : read.getData());
        data.putAll(data(rotated));
        V1Secret next = new V1Secret().apiVersion("v1").kind("Secret").metadata(read.getMetadata())
                .type(read.getType()).data(data);
        try {
            api.replaceNamespacedSecret(SELF_SIGNED_SECRET, namespace, next).execute();
            return true;
        } catch (ApiException e) {
            if (e.getCode() == 409) {
                LOG.log(Level.INFO, selfSignedLabel + " changed since it was read (another replica rotated); re-reading");
                return false;
            }
            throw apiError(selfSignedLabel, "cannot be updated", e);
        }
    }

    private Map<String, byte[]> data(CaMaterial material) {
        Map<String, byte[]> data = new LinkedHashMap<>();
        data.put(CA_CERT, bytes(Pem.certificate(material.signingCertificate())));
        data.put(CA_KEY, bytes(Pem.privateKey(material.signingKey())));
        data.put(CERT_CHAIN, new byte[0]);
        data.put(PRIVATE_KEY, new byte[0]);
        data.put(ROOT_CERT, bytes(Pem.certificates(material.roots())));
        return data;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /** The kept root, checked as the directory store checks its files. */
    private CaMaterial parse(V1Secret secret, Instant now) {
        Map<String, String> data = texts(secret);
        Path certKey = selfSignedLabel.resolve(CA_CERT);
        Path keyKey = selfSignedLabel.resolve(CA_KEY);
        if (!data.containsKey(CA_CERT) || !data.containsKey(CA_KEY)) {
            throw new CaLoadException(data.containsKey(CA_CERT) ? keyKey : certKey, "missing; restore it, or delete "
                    + selfSignedLabel + " to create a new root (every workload certificate then changes trust)");
        }
        List<X509Certificate> certs = Pem.parseCertificates(data.get(CA_CERT), certKey);
        if (certs.size() != 1) {
            throw new CaLoadException(certKey, "holds " + certs.size() + " certificates, expected the one self-signed root");
        }
        X509Certificate cert = certs.getFirst();
        PrivateKey key = Pem.parsePrivateKey(data.get(CA_KEY), keyKey);
        ChainVerifier.checkSigningPair(cert, certKey, key, keyKey);
        if (!ChainVerifier.selfSigned(cert)) {
            throw new CaLoadException(certKey, "certificate " + cert.getSubjectX500Principal() + " is not self-signed");
        }
        List<X509Certificate> roots = new ArrayList<>(List.of(cert));
        String earlier = data.getOrDefault(ROOT_CERT, "");
        if (!earlier.isBlank()) {
            Path rootKey = selfSignedLabel.resolve(ROOT_CERT);
            for (X509Certificate old : Pem.parseCertificates(earlier, rootKey)) {
                if (!old.getPublicKey().equals(cert.getPublicKey())) {
                    throw new CaLoadException(rootKey, "certificate " + old.getSubjectX500Principal()
                            + " is not for the key in " + CA_KEY);
                }
                if (!roots.contains(old) && old.getNotAfter().toInstant().isAfter(now)) {
                    roots.add(old);
                }
            }
        }
        return new CaMaterial(cert, key, List.of(), roots, new CaMaterial.Origin(CaMaterial.Kind.SELF_SIGNED, selfSignedLabel));
    }

    /** A Secret of istiod's namespace; empty when absent. */
    private Optional<V1Secret> read(String name, Path label) {
        return get(() -> api.readNamespacedSecret(name, namespace).execute(), label);
    }

    private interface ApiCall<T> {
        T call() throws ApiException;
    }

    private <T> Optional<T> get(ApiCall<T> request, Path label) {
        try {
            return Optional.of(request.call());
        } catch (ApiException e) {
            if (e.getCode() == 404) {
                return Optional.empty();
            }
            throw apiError(label, "cannot be read", e);
        }
    }

    /**
     * Runs {@code attempt} again, after growing pauses, while it fails on the API (no answer,
     * an error status, the namespace missing) and the budget lasts; then the last error, with
     * what was tried, is final. Failures of what the API answered (a damaged root) are final at once.
     */
    private <T> T retrying(Path label, Supplier<T> attempt) {
        long deadline = System.nanoTime() + startRetry.budget().toNanos();
        Duration pause = null;
        for (int attempts = 1; ; attempts++) {
            try {
                return attempt.get();
            } catch (CaLoadException e) {
                if (!(e.getCause() instanceof ApiException)) {
                    throw e;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new CaLoadException(label, "still failing after " + attempts + " attempts in "
                            + startRetry.budget().toMillis() + " ms (MESHPILOT_CA_SECRET_TIMEOUT), so the CA cannot start: "
                            + "in Kubernetes mode its root is kept only in istiod's namespace, which replicas share; "
                            + "last error: " + e.reason(), e.getCause());
                }
                pause = startRetry.after(pause);
                Duration sleep = Duration.ofNanos(Math.min(pause.toNanos(), left));
                LOG.log(Level.WARNING, e.getMessage() + "; asking again in " + sleep.toMillis() + " ms (attempt "
                        + attempts + ")");
                try {
                    Thread.sleep(sleep);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new CaLoadException(label, "interrupted while waiting for the API server", interrupted);
                }
            }
        }
    }

    /** Secret values as text; ISO-8859-1 so that binary garbage still decodes and fails as "not PEM". */
    private static Map<String, String> texts(V1Secret secret) {
        Map<String, String> out = new LinkedHashMap<>();
        if (secret.getData() != null) {
            secret.getData().forEach((k, v) -> out.put(k, new String(v, StandardCharsets.ISO_8859_1)));
        }
        return out;
    }

    private CaLoadException apiError(Path label, String what, ApiException e) {
        String reason = e.getCode() == 0 ? "no answer (" + (e.getCause() == null ? firstLine(e.getMessage())
                : e.getCause().toString()) + ")" : "HTTP " + e.getCode() + " " + firstLine(e.getResponseBody());
        return new CaLoadException(label, what + " through " + client.describe() + ": " + reason, e);
    }

    private static String firstLine(String body) {
        if (body == null) {
            return "";
        }
        String line = body.strip().lines().findFirst().orElse("");
        return line.length() > 200 ? line.substring(0, 200) + "..." : line;
    }
}
