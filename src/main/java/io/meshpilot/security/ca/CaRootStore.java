package io.meshpilot.security.ca;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Where a self-signed root CA is kept between runs and replicas: a directory without
 * Kubernetes ({@link #directory}), istiod's {@code istio-ca-secret} Secret with it
 * ({@link KubeSecretCaRootStore}). Plugged-in CA files (ROOT_CA_DIR) are read, never kept, so
 * they need no store; in Kubernetes the store also offers the plugged-in CA of the
 * {@code cacerts} Secret, which is the store's place too.
 */
public interface CaRootStore {
    /** The kept root, or a new one created and kept from {@code options}. */
    CaMaterial loadOrCreate(SelfSignedOptions options, Clock clock);

    /**
     * One root check against the kept state: a root another replica rotated is adopted, a
     * root in its grace period is rotated and kept first.
     *
     * @return the material to use from now on, or empty when nothing changed
     */
    Optional<CaMaterial> checkRotation(CaMaterial current, SelfSignedRootRotator rotator, Instant now);

    /** A plugged-in CA kept beside the root (the {@code cacerts} Secret), validated; empty when there is none. */
    default Optional<CaMaterial> pluggedIn(Clock clock) {
        return Optional.empty();
    }

    /**
     * Follows changes to the plugged-in CA {@code current} came from, when it came from this
     * store: each change that loads and validates goes to {@code onChange} (possibly equal to
     * what is in use); one that does not is logged and skipped.
     *
     * @return what stops following
     */
    default AutoCloseable watchPluggedIn(CaMaterial current, Consumer<CaMaterial> onChange) {
        return () -> { };
    }

    /** For logs: where the root is kept. */
    String describe();

    /** The embedded store: files in {@code stateDir} (--caStateDir), locked while written. */
    static CaRootStore directory(Path stateDir) {
        return new CaRootStore() {
            @Override
            public CaMaterial loadOrCreate(SelfSignedOptions options, Clock clock) {
                return SelfSignedCaStore.loadOrCreate(stateDir, options, clock);
            }

            @Override
            public Optional<CaMaterial> checkRotation(CaMaterial current, SelfSignedRootRotator rotator, Instant now) {
                return SelfSignedCaStore.checkRotation(stateDir, current, rotator, now);
            }

            @Override
            public String describe() {
                return "directory " + stateDir;
            }
        };
    }
}
