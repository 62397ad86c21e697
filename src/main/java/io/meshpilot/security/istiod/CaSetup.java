package io.meshpilot.security.istiod;

import io.meshpilot.security.CaOptions;
import io.meshpilot.security.ServingCertificate;
import io.meshpilot.security.ca.CaLoadException;
import io.meshpilot.security.ca.CaLoader;
import io.meshpilot.security.ca.CaMaterial;
import io.meshpilot.security.ca.CaRootStore;
import io.meshpilot.security.ca.CertificateAuthority;
import io.meshpilot.security.ca.SelfSignedCaStore;
import io.meshpilot.security.ca.SelfSignedOptions;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The part of component 4 (CA) that must exist before the container starts, because the
 * secure sockets are configured with istiod's serving certificate when Helidon boots: the CA
 * material (plugged-in from ROOT_CA_DIR when it holds CA files, as istiod, or from the
 * {@code cacerts} Secret in Kubernetes mode; otherwise the self-signed root kept in --caStateDir
 * or, in Kubernetes mode, {@code istio-ca-secret}, created once), the signing CA, and the first serving
 * certificate it issues.
 *
 * @param ca          the signing CA
 * @param serving     istiod's first serving certificate
 * @param names       the names it is issued for (renewals use the same)
 * @param servingTtl  its lifetime (DEFAULT_WORKLOAD_CERT_TTL, renewed half way)
 * @param rootStore   where the self-signed root is kept (rotations are written there)
 */
public record CaSetup(CertificateAuthority ca, ServingCertificate serving, List<String> names,
                      Duration servingTtl, CaRootStore rootStore) {

    /**
     * Loads or creates the CA and issues the serving certificate.
     *
     * @throws CaLoadException with the file and the reason when CA files are damaged; nothing is
     *                         written over them
     */
    public static CaSetup create(CaOptions o) {
        Path rootCaDir = Path.of(o.rootCaDir());
        CaMaterial material;
        // ROOT_CA_DIR first (where istiod's pod mounts cacerts), then the store's own plugged-in CA
        // (the cacerts Secret in Kubernetes mode), then the store's self-signed root
        Optional<CaMaterial> kept;
        if (CaLoader.hasPluggedIn(rootCaDir)) {
            material = CaLoader.loadPluggedIn(rootCaDir);
        } else if ((kept = o.rootStore().pluggedIn(Clock.systemUTC())).isPresent()) {
            material = kept.get();
        } else {
            // istiod names the root's Organization after the trust domain; the mesh file is not
            // loaded yet at this point, so a new root says cluster.local (identities are unaffected).
            // A lone ROOT_CA_DIR/root-cert.pem (extra roots for a self-signed CA in istiod) is not read.
            SelfSignedOptions options = SelfSignedOptions.defaults()
                    .withKeyType(o.ecdsa() ? SelfSignedOptions.KeyType.EC_P256 : SelfSignedOptions.KeyType.RSA)
                    .withRsaKeySize(o.rsaKeySize())
                    .withTtl(o.selfSignedTtl());
            material = o.rootStore().loadOrCreate(options, Clock.systemUTC());
        }
        CertificateAuthority ca = new CertificateAuthority(material, o.defaultWorkloadCertTtl(),
                o.maxWorkloadCertTtl(), Clock.systemUTC());
        List<String> names = o.servingNames();
        // istiod issues its DNS certificate for the CA's lifetime and re-issues it when the root
        // changes; here it lives DEFAULT_WORKLOAD_CERT_TTL and is renewed half way (and on a root
        // rotation), so renewal runs routinely instead of once a decade
        ServingCertificate serving = ServingCertificate.issue(ca, names, o.defaultWorkloadCertTtl(), material.roots());
        return new CaSetup(ca, serving, names, o.defaultWorkloadCertTtl(), o.rootStore());
    }
}
