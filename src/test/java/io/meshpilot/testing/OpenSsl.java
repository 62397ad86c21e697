package io.meshpilot.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import io.meshpilot.security.ca.IssuedChain;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The real openssl CLI, run in one directory: makes keys, CSRs and CAs, and checks what we issue. */
public final class OpenSsl {
    /** Only a guard against a hung process, never a performance assertion. */
    private static final long TIMEOUT_SECONDS = 120;

    private final Path dir;

    public OpenSsl(Path dir) {
        this.dir = dir;
    }

    public Path dir() {
        return dir;
    }

    public record Result(int exit, String output) {
    }

    public Result tryRun(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add("openssl");
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail("openssl did not finish: " + cmd);
            }
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new AssertionError("cannot run " + cmd, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    public String run(String... args) {
        Result r = tryRun(args);
        if (r.exit() != 0) {
            fail("openssl " + String.join(" ", args) + " exited " + r.exit() + ":\n" + r.output());
        }
        return r.output();
    }

    public Path write(String name, String content) {
        try {
            return Files.writeString(dir.resolve(name), content);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    public String read(String name) {
        try {
            return Files.readString(dir.resolve(name));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * A CSR for a new key; {@code keySpec} is openssl's -newkey argument ("rsa:2048", "ec", "ed25519"),
     * {@code curve} the EC curve or null, {@code san} an -addext subjectAltName value or null.
     */
    public String csr(String name, String keySpec, String curve, String san) {
        List<String> args = new ArrayList<>(List.of("req", "-new", "-newkey", keySpec, "-nodes",
                "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/O=workload"));
        if (curve != null) {
            args.addAll(List.of("-pkeyopt", "ec_paramgen_curve:" + curve));
        }
        if (san != null) {
            args.addAll(List.of("-addext", "subjectAltName=" + san));
        }
        run(args.toArray(String[]::new));
        return read(name + ".csr");
    }

    public String rsaCsr(String name, int bits, String san) {
        return csr(name, "rsa:" + bits, null, san);
    }

    public String ecCsr(String name, String curve, String san) {
        return csr(name, "ec", curve, san);
    }

    /** openssl's extension sections for the CAs the tests build. */
    public void writeConfig() {
        write("ca.cnf", """
                [req]
                distinguished_name = dn
                prompt = no
                [dn]
                O = Istio
                [v3_root]
                basicConstraints = critical, CA:TRUE
                keyUsage = critical, keyCertSign, cRLSign
                subjectKeyIdentifier = hash
                [v3_int]
                basicConstraints = critical, CA:TRUE
                keyUsage = critical, digitalSignature, keyEncipherment, keyCertSign, cRLSign
                subjectKeyIdentifier = hash
                authorityKeyIdentifier = keyid
                [v3_no_certsign]
                basicConstraints = critical, CA:TRUE
                keyUsage = critical, digitalSignature
                subjectKeyIdentifier = hash
                authorityKeyIdentifier = keyid
                [v3_leaf]
                basicConstraints = critical, CA:FALSE
                keyUsage = critical, digitalSignature, keyEncipherment
                subjectKeyIdentifier = hash
                authorityKeyIdentifier = keyid
                """);
    }

    /** A self-signed root: {@code name}-cert.pem and {@code name}-key.pem; keySpec as openssl -newkey, "ec" is P-256. */
    public void root(String name, String cn, String keySpec) {
        root(name, cn, keySpec, 3650);
    }

    public void root(String name, String cn, String keySpec, int days) {
        writeConfig();
        List<String> args = new ArrayList<>(List.of("req", "-x509", "-newkey", keySpec, "-nodes",
                "-keyout", name + "-key.pem", "-out", name + "-cert.pem",
                "-days", String.valueOf(days), "-subj", "/O=Istio/CN=" + cn, "-config", "ca.cnf", "-extensions", "v3_root"));
        if (keySpec.equals("ec")) {
            args.addAll(List.of("-pkeyopt", "ec_paramgen_curve:prime256v1"));
        }
        run(args.toArray(String[]::new));
    }

    /** A certificate for a new key signed by {@code issuer}: {@code name}-cert.pem and {@code name}-key.pem. */
    public void issue(String name, String cn, String keySpec, String issuer, String section, int days) {
        writeConfig();
        List<String> req = new ArrayList<>(List.of("req", "-new", "-newkey", keySpec, "-nodes",
                "-keyout", name + "-key.pem", "-out", name + ".csr", "-subj", "/O=Istio/CN=" + cn));
        if (keySpec.equals("ec")) {
            req.addAll(List.of("-pkeyopt", "ec_paramgen_curve:prime256v1"));
        }
        run(req.toArray(String[]::new));
        run("x509", "-req", "-in", name + ".csr", "-CA", issuer + "-cert.pem", "-CAkey", issuer + "-key.pem",
                "-set_serial", String.valueOf(System.nanoTime()), "-out", name + "-cert.pem", "-days", String.valueOf(days),
                "-extfile", "ca.cnf", "-extensions", section);
    }

    /** {@code openssl verify -x509_strict}: the output, which says "OK" on success. */
    public Result verify(String rootFile, String untrustedFile, String leafFile) {
        List<String> args = new ArrayList<>(List.of("verify", "-x509_strict", "-CAfile", rootFile));
        if (untrustedFile != null) {
            args.addAll(List.of("-untrusted", untrustedFile));
        }
        args.add(leafFile);
        return tryRun(args.toArray(String[]::new));
    }

    /** Writes an issued chain as leaf.pem, intermediates.pem and root.pem, and verifies the leaf against the root. */
    public Result verifyChain(IssuedChain chain) {
        List<String> c = chain.certChain();
        write("leaf.pem", c.getFirst());
        write("root.pem", c.getLast());
        String untrusted = String.join("", c.subList(1, c.size() - 1));
        if (!untrusted.isEmpty()) {
            write("intermediates.pem", untrusted);
        }
        return verify("root.pem", untrusted.isEmpty() ? null : "intermediates.pem", "leaf.pem");
    }

    public String text(String certFile) {
        return run("x509", "-in", certFile, "-noout", "-text");
    }
}
