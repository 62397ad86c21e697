package io.meshpilot.security.credentials;

import io.meshpilot.config.yaml.SafeYaml;
import io.meshpilot.config.yaml.YamlBindingException;
import io.meshpilot.security.ca.Pem;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Kubernetes {@code v1 Secret} manifests (YAML or JSON, several documents per file) turned
 * into validated {@link Credential}s, with istiod's key names: {@code cert}/{@code key}/
 * {@code cacert} (generic Secrets, preferred as istiod does) or {@code tls.crt}/{@code tls.key}/
 * {@code ca.crt} (kubernetes.io/tls). Values come from {@code data} (base64) and
 * {@code stringData} (plain, wins over data as the API server merges it). Documents of other
 * kinds are skipped.
 */
public final class SecretManifests {
    static final String GENERIC_CERT = "cert";
    static final String GENERIC_KEY = "key";
    static final String GENERIC_CA = "cacert";
    static final String TLS_CERT = "tls.crt";
    static final String TLS_KEY = "tls.key";
    static final String TLS_CA = "ca.crt";

    private SecretManifests() {
    }

    /** What one file held. */
    public record Parsed(List<Credential> credentials, List<Problem> problems, List<String> skipped) {
    }

    /**
     * A document that was rejected. {@code namespace}/{@code name} are null when the document
     * did not get as far as naming its Secret; {@code document} is 1-based, 0 for the whole file.
     */
    public record Problem(String file, int document, int line, String namespace, String name, String reason) {
        @Override
        public String toString() {
            return file + (document > 0 ? " document " + document : "") + (line > 0 ? " line " + line : "")
                    + (name != null ? " secret " + namespace + "/" + name : "") + ": " + reason;
        }
    }

    /** Thrown for a file that is not YAML at all: nothing in it can be trusted. */
    public static final class UnreadableFile extends Exception {
        UnreadableFile(String message) {
            super(message);
        }
    }

    public static Parsed parse(String file, String text) throws UnreadableFile {
        List<Node> docs;
        try {
            docs = SafeYaml.documents(file, text);
        } catch (YamlBindingException e) {
            throw new UnreadableFile(file + ": " + e.first());
        }
        List<Credential> out = new ArrayList<>();
        List<Problem> problems = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        for (int i = 0; i < docs.size(); i++) {
            Node doc = docs.get(i);
            int line = doc.getStartMark() == null ? 0 : doc.getStartMark().getLine() + 1;
            if (!(doc instanceof MappingNode m)) {
                problems.add(new Problem(file, i + 1, line, null, null, "not a Kubernetes object (expected a mapping)"));
                continue;
            }
            Map<String, Node> top = fields(m);
            String kind = scalar(top.get("kind"));
            String apiVersion = scalar(top.get("apiVersion"));
            if (!"Secret".equals(kind) || !"v1".equals(apiVersion)) {
                skipped.add((apiVersion == null ? "?" : apiVersion) + "/" + (kind == null ? "?" : kind));
                continue;
            }
            Map<String, Node> meta = top.get("metadata") instanceof MappingNode mm ? fields(mm) : Map.of();
            String name = scalar(meta.get("name"));
            String namespace = scalar(meta.get("namespace"));
            if (namespace == null || namespace.isEmpty()) {
                namespace = "default";
            }
            if (name == null || name.isEmpty()) {
                problems.add(new Problem(file, i + 1, line, null, null, "Secret without metadata.name"));
                continue;
            }
            try {
                Map<String, byte[]> data = new TreeMap<>();
                read(top.get("data"), "data", true, data);
                read(top.get("stringData"), "stringData", false, data);
                out.add(credential(namespace, name, data, file));
            } catch (IllegalArgumentException e) {
                problems.add(new Problem(file, i + 1, line, namespace, name, e.getMessage()));
            }
        }
        return new Parsed(List.copyOf(out), List.copyOf(problems), List.copyOf(skipped));
    }

    private static void read(Node node, String field, boolean base64, Map<String, byte[]> into) {
        if (node == null || node instanceof ScalarNode s && s.getTag().getValue().endsWith(":null")) {
            return;
        }
        if (!(node instanceof MappingNode m)) {
            throw new IllegalArgumentException(field + " is not a mapping");
        }
        for (Map.Entry<String, Node> e : fields(m).entrySet()) {
            String value = scalar(e.getValue());
            if (value == null) {
                throw new IllegalArgumentException(field + "." + e.getKey() + " is not a string");
            }
            if (base64) {
                try {
                    into.put(e.getKey(), Base64.getDecoder().decode(value.replaceAll("\\s", "")));
                } catch (IllegalArgumentException bad) {
                    throw new IllegalArgumentException(field + "." + e.getKey() + " is not base64: " + bad.getMessage());
                }
            } else {
                into.put(e.getKey(), value.getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    /**
     * A validated credential from a Secret's data (istiod's ExtractKeyCertAndStaple and
     * extractRoot), or why not.
     */
    public static Credential credential(String namespace, String name, Map<String, byte[]> data, String source) {
        String cert;
        String key;
        if (hasValue(data, GENERIC_CERT) && hasValue(data, GENERIC_KEY)) {
            cert = text(data.get(GENERIC_CERT));
            key = text(data.get(GENERIC_KEY));
        } else if (hasValue(data, TLS_CERT) && hasValue(data, TLS_KEY)) {
            cert = text(data.get(TLS_CERT));
            key = text(data.get(TLS_KEY));
        } else {
            cert = null;
            key = null;
            for (String[] pair : new String[][] {{GENERIC_CERT, GENERIC_KEY}, {TLS_CERT, TLS_KEY}}) {
                if (data.containsKey(pair[0]) || data.containsKey(pair[1])) {
                    throw new IllegalArgumentException("needs both \"" + pair[0] + "\" and \"" + pair[1]
                            + "\" with content; found keys: " + String.join(", ", data.keySet()));
                }
            }
        }
        String ca = hasValue(data, GENERIC_CA) ? text(data.get(GENERIC_CA))
                : hasValue(data, TLS_CA) ? text(data.get(TLS_CA)) : null;
        if (cert == null && ca == null) {
            throw new IllegalArgumentException("has none of the expected keys (" + GENERIC_CERT + " and " + GENERIC_KEY
                    + ") or (" + TLS_CERT + " and " + TLS_KEY + ") or " + GENERIC_CA + " or " + TLS_CA + "; found: "
                    + (data.isEmpty() ? "(no data)" : String.join(", ", data.keySet())));
        }
        if (cert != null) {
            List<X509Certificate> chain;
            try {
                chain = Pem.certificatesIn(cert);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("certificate: " + e.getMessage());
            }
            PrivateKey pk;
            try {
                pk = Pem.privateKeyIn(key);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("private key: " + e.getMessage());
            }
            if (!Pem.keyMatches(pk, chain.getFirst())) {
                throw new IllegalArgumentException("private key does not match the certificate ("
                        + chain.getFirst().getSubjectX500Principal().getName() + ")");
            }
        }
        if (ca != null) {
            try {
                Pem.certificatesIn(ca);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("CA certificate: " + e.getMessage());
            }
        }
        return new Credential(namespace, name, cert, key, ca, source);
    }

    /** Why the credential's certificates are not valid now (expired, not yet valid), or null. */
    public static String validityProblem(Credential c, Instant now) {
        List<String> pems = new ArrayList<>();
        if (c.certificateChain() != null) {
            pems.add(c.certificateChain());
        }
        c.ca().ifPresent(pems::add);
        for (String pem : pems) {
            for (X509Certificate cert : Pem.certificatesIn(pem)) {
                Date at = Date.from(now);
                if (at.after(cert.getNotAfter())) {
                    return "certificate " + cert.getSubjectX500Principal().getName() + " expired at "
                            + cert.getNotAfter().toInstant();
                }
                if (at.before(cert.getNotBefore())) {
                    return "certificate " + cert.getSubjectX500Principal().getName() + " not valid before "
                            + cert.getNotBefore().toInstant();
                }
            }
        }
        return null;
    }

    private static boolean hasValue(Map<String, byte[]> data, String k) {
        byte[] v = data.get(k);
        return v != null && v.length > 0;
    }

    /** Bytes as text, one char per byte: PEM is ASCII, and anything else round-trips unchanged. */
    private static String text(byte[] b) {
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    private static Map<String, Node> fields(MappingNode m) {
        Map<String, Node> out = new TreeMap<>();
        for (NodeTuple t : m.getValue()) {
            String k = scalar(t.getKeyNode());
            if (k != null) {
                out.put(k, t.getValueNode());
            }
        }
        return out;
    }

    private static String scalar(Node n) {
        return n instanceof ScalarNode s && !s.getTag().getValue().endsWith(":null") ? s.getValue() : null;
    }
}
