package io.meshpilot.security.credentials;

import static io.meshpilot.security.credentials.TestCredentials.genericSecret;
import static io.meshpilot.security.credentials.TestCredentials.selfSigned;
import static io.meshpilot.security.credentials.TestCredentials.tlsSecret;
import static io.meshpilot.security.credentials.TestCredentials.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.config.ConfigKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The --credentialsDir store over real files with real certificates. */
class DirectoryCredentialStoreTest {
    static final long WAIT_SECONDS = 20;

    @Test
    void tlsAndGenericSecretsFromBase64DataAndStringData(@TempDir Path dir) throws Exception {
        var gw = selfSigned("gateway.example.com");
        var ca = selfSigned("Example Root CA");
        var generic = selfSigned("generic.example.com");
        var caOnly = selfSigned("Only CA");
        write(dir, "gateway.yaml", tlsSecret("istio-system", "bookinfo-cred", gw.cert(), gw.key(), ca.cert()));
        write(dir, "more.yml", genericSecret(null, "generic-cred", generic.cert(), generic.key(), null)
                + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-a-secret\ndata:\n  a: b\n"
                + "---\n" + genericSecret("istio-system", "split-cacert", null, null, caOnly.cert()));
        write(dir, "notes.txt", "not a manifest");
        try (DirectoryCredentialStore store = new DirectoryCredentialStore(dir)) {
            var r = store.scan();
            assertEquals(List.of(), r.problems());
            assertEquals(3, r.credentials());
            assertEquals(Set.of(CredentialStore.key("istio-system", "bookinfo-cred"),
                    CredentialStore.key("default", "generic-cred"), CredentialStore.key("istio-system", "split-cacert")),
                    r.changed());

            Credential tls = store.get("istio-system", "bookinfo-cred").orElseThrow();
            assertEquals(gw.cert(), tls.certificateChain());
            assertEquals(gw.key(), tls.privateKey());
            assertEquals(ca.cert(), tls.caCertificate());
            assertFalse(tls.toString().contains("PRIVATE"), "toString never shows the key: " + tls);

            Credential g = store.get("default", "generic-cred").orElseThrow(); // namespace defaults to "default"
            assertEquals(generic.cert(), g.certificateChain());
            assertEquals(generic.key(), g.privateKey());
            assertTrue(g.ca().isEmpty());

            assertTrue(store.exists("istio-system", "bookinfo-cred"));
            assertFalse(store.exists("default", "bookinfo-cred"), "namespaces are separate");
            assertFalse(store.exists("istio-system", "missing"));

            // istiod's -cacert lookup: the exact Secret, else the one without the suffix
            assertEquals(ca.cert(), store.caCertificate("istio-system", "bookinfo-cred-cacert").orElseThrow());
            assertEquals(caOnly.cert(), store.caCertificate("istio-system", "split-cacert").orElseThrow());
            assertFalse(store.get("istio-system", "split-cacert").orElseThrow().hasKeyPair());
            assertTrue(store.caCertificate("default", "generic-cred-cacert").isEmpty(), "no CA in that Secret");
        }
    }

    @Test
    void aBadChangeKeepsTheLastGoodVersionAndSaysWhy(@TempDir Path dir) throws Exception {
        var good = selfSigned("good.example.com");
        var other = selfSigned("other.example.com");
        write(dir, "a.yaml", tlsSecret("istio-system", "cred", good.cert(), good.key(), null)
                + "---\n" + tlsSecret("istio-system", "second", other.cert(), other.key(), null));
        try (DirectoryCredentialStore store = new DirectoryCredentialStore(dir)) {
            assertEquals(2, store.scan().credentials());

            // the certificate is no longer PEM: that Secret keeps its last good version, the other one updates
            var newer = selfSigned("newer.example.com");
            write(dir, "a.yaml", tlsSecret("istio-system", "cred", "-----BEGIN CERTIFICATE-----\nnot base64!\n"
                    + "-----END CERTIFICATE-----\n", good.key(), null)
                    + "---\n" + tlsSecret("istio-system", "second", newer.cert(), newer.key(), null));
            var r = store.scan();
            assertEquals(Set.of(CredentialStore.key("istio-system", "second")), r.changed());
            assertEquals(good.cert(), store.get("istio-system", "cred").orElseThrow().certificateChain());
            assertEquals(newer.cert(), store.get("istio-system", "second").orElseThrow().certificateChain());
            assertEquals(1, r.problems().size(), r.problems().toString());
            String problem = r.problems().getFirst().toString();
            assertTrue(problem.startsWith("a.yaml document 1") && problem.contains("istio-system/cred")
                    && problem.contains("certificate: not a PEM certificate"), problem);

            // not YAML at all: every Secret of the file stays as it was
            write(dir, "a.yaml", "apiVersion: v1\nkind: Secret\n  data: [unclosed\n");
            r = store.scan();
            assertEquals(Set.of(), r.changed());
            assertEquals(2, r.credentials());
            assertTrue(r.problems().getFirst().toString().contains("invalid YAML"), r.problems().toString());

            // fixed: the problems are gone and the new content is served
            write(dir, "a.yaml", tlsSecret("istio-system", "cred", newer.cert(), newer.key(), null));
            r = store.scan();
            assertEquals(List.of(), r.problems());
            assertEquals(newer.cert(), store.get("istio-system", "cred").orElseThrow().certificateChain());
            assertFalse(store.exists("istio-system", "second"), "removed from the file: gone");
        }
    }

    @Test
    void aKeyThatDoesNotMatchItsCertificateIsRejected(@TempDir Path dir) throws Exception {
        var a = selfSigned("a.example.com");
        var b = selfSigned("b.example.com");
        write(dir, "mismatch.yaml", genericSecret("istio-system", "mixed", a.cert(), b.key(), null));
        write(dir, "half.yaml", genericSecret("istio-system", "half", a.cert(), null, null));
        write(dir, "badb64.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: b64\ndata:\n  tls.crt: '%%%'\n"
                + "  tls.key: '%%%'\n");
        try (DirectoryCredentialStore store = new DirectoryCredentialStore(dir)) {
            var r = store.scan();
            assertEquals(0, r.credentials());
            assertFalse(store.exists("istio-system", "mixed"));
            String all = r.problems().toString();
            assertTrue(all.contains("mismatch.yaml") && all.contains("private key does not match the certificate"), all);
            assertTrue(all.contains("half.yaml") && all.contains("needs both \"cert\" and \"key\""), all);
            assertTrue(all.contains("badb64.yaml") && all.contains("data.tls.crt is not base64"), all);
        }
    }

    @Test
    void aChangedFileIsReloadedAndListenersHearWhichSecretChanged(@TempDir Path dir) throws Exception {
        var first = selfSigned("first.example.com");
        Path creds = dir.resolve("credentials");
        try (DirectoryCredentialStore store = new DirectoryCredentialStore(creds)) {
            assertEquals(0, store.start().credentials(), "a missing directory holds nothing");
            LinkedBlockingQueue<Set<ConfigKey>> heard = new LinkedBlockingQueue<>();
            store.addListener(heard::add);

            write(creds, "gw.yaml", tlsSecret("istio-system", "gw-cred", first.cert(), first.key(), null));
            assertEquals(Set.of(CredentialStore.key("istio-system", "gw-cred")), heard.poll(WAIT_SECONDS, TimeUnit.SECONDS));
            assertEquals(first.cert(), store.get("istio-system", "gw-cred").orElseThrow().certificateChain());

            var second = selfSigned("second.example.com");
            write(creds, "gw.yaml", tlsSecret("istio-system", "gw-cred", second.cert(), second.key(), null));
            assertEquals(Set.of(CredentialStore.key("istio-system", "gw-cred")), heard.poll(WAIT_SECONDS, TimeUnit.SECONDS));
            assertEquals(second.cert(), store.get("istio-system", "gw-cred").orElseThrow().certificateChain());

            // a bad rewrite is not a change
            var scans = new LinkedBlockingQueue<DirectoryCredentialStore.ScanResult>();
            store.addScanListener(scans::add);
            write(creds, "gw.yaml", genericSecret("istio-system", "gw-cred", second.cert(), first.key(), null));
            DirectoryCredentialStore.ScanResult r;
            do {
                r = scans.poll(WAIT_SECONDS, TimeUnit.SECONDS);
            } while (r != null && r.problems().isEmpty());
            assertTrue(r != null && r.changed().isEmpty(), String.valueOf(r));
            assertNull(heard.poll());
            assertEquals(second.key(), store.get("istio-system", "gw-cred").orElseThrow().privateKey());

            Files.delete(creds.resolve("gw.yaml"));
            assertEquals(Set.of(CredentialStore.key("istio-system", "gw-cred")), heard.poll(WAIT_SECONDS, TimeUnit.SECONDS));
            assertFalse(store.exists("istio-system", "gw-cred"));
        }
    }
}
