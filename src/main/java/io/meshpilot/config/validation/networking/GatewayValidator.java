package io.meshpilot.config.validation.networking;

import io.meshpilot.api.networking.v1alpha3.Gateway;
import io.meshpilot.api.networking.v1alpha3.Port;
import io.meshpilot.api.networking.v1alpha3.Server;
import io.meshpilot.api.networking.v1alpha3.ServerTLSSettings;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Checks;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.ValidationResult;
import io.meshpilot.config.validation.Validator;
import io.meshpilot.config.protocol.Protocol;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * istiod's Gateway rules: a DNS-label name, at least one server; per server at least one
 * "[namespace/]host", a port with number, name and known protocol, a bind address, TLS
 * settings required for HTTPS/TLS and refused for other protocols (an HTTP server may only
 * redirect), the TLS mode's credential rules; port names unique across servers.
 */
public final class GatewayValidator implements Validator {

    /** Cipher suites Envoy (BoringSSL) accepts for TLS 1.0-1.2 servers. */
    private static final Set<String> CIPHER_SUITES = Set.of(
            "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
            "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
            "ECDHE-PSK-CHACHA20-POLY1305", "ECDHE-ECDSA-AES128-SHA", "ECDHE-RSA-AES128-SHA", "ECDHE-PSK-AES128-CBC-SHA",
            "ECDHE-ECDSA-AES256-SHA", "ECDHE-RSA-AES256-SHA", "ECDHE-PSK-AES256-CBC-SHA", "AES128-GCM-SHA256",
            "AES256-GCM-SHA384", "AES128-SHA", "PSK-AES128-CBC-SHA", "AES256-SHA", "PSK-AES256-CBC-SHA", "DES-CBC3-SHA",
            "[ECDHE-ECDSA-AES128-GCM-SHA256|ECDHE-ECDSA-CHACHA20-POLY1305]",
            "[ECDHE-RSA-AES128-GCM-SHA256|ECDHE-RSA-CHACHA20-POLY1305]");

    @Override
    public void validate(Config config, Validation v) {
        NetworkingChecks.metadata(config, v);
        if (!NetworkingChecks.isDnsLabel(config.name())) {
            v.at("metadata").at("name").error("gateway name \"" + config.name() + "\" must be a DNS-1123 label (no dots)");
        }
        Gateway gw = (Gateway) config.spec();
        Validation spec = v.at("spec");
        if (gw.getServersCount() == 0) {
            spec.at("servers").error("gateway must have at least one server");
        }
        Map<String, Integer> portNames = new HashMap<>();
        for (int i = 0; i < gw.getServersCount(); i++) {
            Server s = gw.getServers(i);
            Validation at = spec.at("servers", i);
            server(at, s);
            if (s.hasPort()) {
                String name = s.getPort().getName();
                Integer first = portNames.putIfAbsent(name, i);
                if (first != null && !name.isEmpty()) {
                    at.at("port").at("name").error("port names in servers must be unique: \"" + name
                            + "\" is already used by servers[" + first + "]");
                }
                if (!Protocol.parse(s.getPort().getProtocol()).isHttp() && s.getTls().getHttpsRedirect()) {
                    at.at("tls").at("httpsRedirect").warn("httpsRedirect only has an effect on HTTP servers");
                }
            }
        }
        if (gw.getSelectorCount() > 0) {
            // istiod does not check selector labels; labels that cannot exist never select a pod
            Validation tmp = new Validation();
            Checks.labels(tmp, gw.getSelectorMap());
            for (ValidationResult.Issue issue : tmp.result().errors()) {
                spec.at("selector").warn(issue.message() + "; the selector matches no workload");
            }
        }
    }

    private static void server(Validation v, Server s) {
        if (s.getHostsCount() == 0) {
            v.at("hosts").error("server must have at least one host");
        }
        for (int j = 0; j < s.getHostsCount(); j++) {
            NetworkingChecks.namespaceSlashHost(v.at("hosts", j), s.getHosts(j), true);
        }
        boolean portOk = serverPort(v, s);
        serverBind(v, s);
        if (s.hasTls()) {
            serverTls(v.at("tls"), s.getTls());
        }
        if (portOk) {
            Protocol p = Protocol.parse(s.getPort().getProtocol());
            if (p.isTls() && !s.hasTls()) {
                v.at("tls").error("server must have TLS settings for HTTPS/TLS protocols");
            } else if (!p.isTls() && s.hasTls()) {
                ServerTLSSettings tls = s.getTls();
                if (p.isHttp()) {
                    boolean passthrough = tls.getMode() == ServerTLSSettings.TLSmode.PASSTHROUGH
                            || tls.getMode() == ServerTLSSettings.TLSmode.AUTO_PASSTHROUGH;
                    if (!passthrough || !tls.getCaCertificates().isEmpty() || !tls.getPrivateKey().isEmpty()
                            || !tls.getServerCertificate().isEmpty()) {
                        v.at("tls").error("a plain text HTTP server cannot have TLS settings (only httpsRedirect)");
                    }
                } else {
                    v.at("tls").error("server cannot have TLS settings for protocol \"" + s.getPort().getProtocol()
                            + "\" (only HTTPS and TLS)");
                }
            }
        }
    }

    private static boolean serverPort(Validation v, Server s) {
        if (!s.hasPort()) {
            v.at("port").error("port is required");
            return false;
        }
        Port port = s.getPort();
        Validation at = v.at("port");
        boolean ok = true;
        if (Protocol.parse(port.getProtocol()) == Protocol.UNSUPPORTED) {
            at.at("protocol").error("invalid protocol \"" + port.getProtocol() + "\" (supported: "
                    + NetworkingChecks.PROTOCOL_LIST + ")");
            ok = false;
        }
        if (port.getNumber() != 0 || !s.getBind().startsWith(NetworkingChecks.UNIX_PREFIX)) {
            ok &= NetworkingChecks.port(at.at("number"), Integer.toUnsignedLong(port.getNumber()));
        }
        if (port.getTargetPort() != 0) {
            at.at("targetPort").error("targetPort has no effect on Gateways; remove it");
            ok = false;
        }
        if (port.getName().isEmpty()) {
            at.at("name").error("port name must be set");
            ok = false;
        }
        return ok;
    }

    private static void serverBind(Validation v, Server s) {
        String bind = s.getBind();
        if (bind.startsWith(NetworkingChecks.UNIX_PREFIX)) {
            NetworkingChecks.unixAddress(v.at("bind"), bind.substring(NetworkingChecks.UNIX_PREFIX.length()));
            if (s.hasPort() && s.getPort().getNumber() != 0) {
                v.at("port").at("number").error("port number must be 0 when binding to a unix domain socket");
            }
        } else if (!bind.isEmpty()) {
            NetworkingChecks.ip(v.at("bind"), bind);
        }
    }

    /** istiod's server TLS rules (validateTLSOptions), shared with Sidecar ingress listeners. */
    static void serverTls(Validation v, ServerTLSSettings tls) {
        if ((tls.getMinProtocolVersion() == ServerTLSSettings.TLSProtocol.TLSV1_0
                || tls.getMinProtocolVersion() == ServerTLSSettings.TLSProtocol.TLSV1_1) && tls.getCipherSuitesCount() == 0) {
            v.at("minProtocolVersion").warn("TLS versions below 1.2 need cipherSuites set: the default suites do "
                    + "not include compatible ciphers");
        }
        Set<String> invalid = new TreeSet<>();
        Set<String> valid = new HashSet<>();
        Set<String> duplicate = new TreeSet<>();
        for (String cs : tls.getCipherSuitesList()) {
            if (!CIPHER_SUITES.contains(cs)) {
                invalid.add(cs);
            } else if (!valid.add(cs)) {
                duplicate.add(cs);
            }
        }
        if (!invalid.isEmpty()) {
            v.at("cipherSuites").warn("ignoring invalid cipher suites: " + invalid);
        }
        if (!duplicate.isEmpty()) {
            v.at("cipherSuites").warn("ignoring duplicate cipher suites: " + duplicate);
        }
        ServerTLSSettings.TLSmode mode = tls.getMode();
        if (mode == ServerTLSSettings.TLSmode.ISTIO_MUTUAL) {
            istioMutualField(v, "serverCertificate", !tls.getServerCertificate().isEmpty());
            istioMutualField(v, "privateKey", !tls.getPrivateKey().isEmpty());
            istioMutualField(v, "caCertificates", !tls.getCaCertificates().isEmpty());
            istioMutualField(v, "tlsCertificates", tls.getTlsCertificatesCount() > 0);
            istioMutualField(v, "credentialName", !tls.getCredentialName().isEmpty());
            istioMutualField(v, "credentialNames", tls.getCredentialNamesCount() > 0);
            return;
        }
        boolean hasCredentialName = !tls.getCredentialName().isEmpty();
        boolean hasCredentialNames = tls.getCredentialNamesCount() > 0;
        if (mode == ServerTLSSettings.TLSmode.PASSTHROUGH || mode == ServerTLSSettings.TLSmode.AUTO_PASSTHROUGH) {
            if (!tls.getCaCrl().isEmpty() || !tls.getServerCertificate().isEmpty() || !tls.getPrivateKey().isEmpty()
                    || !tls.getCaCertificates().isEmpty() || tls.getTlsCertificatesCount() > 0 || hasCredentialName
                    || hasCredentialNames) {
                v.at("mode").warn(mode + " mode does not use certificates; they are ignored");
            }
        }
        int sources = 0;
        if (!tls.getServerCertificate().isEmpty() && !tls.getPrivateKey().isEmpty()) {
            sources++;
        }
        sources += hasCredentialName ? 1 : 0;
        sources += hasCredentialNames ? 1 : 0;
        sources += tls.getTlsCertificatesCount() > 0 ? 1 : 0;
        if (sources > 1) {
            v.error("only one of credentialName, credentialNames, serverCertificate/privateKey or tlsCertificates "
                    + "can be set");
        }
        boolean terminating = mode == ServerTLSSettings.TLSmode.SIMPLE || mode == ServerTLSSettings.TLSmode.MUTUAL
                || mode == ServerTLSSettings.TLSmode.OPTIONAL_MUTUAL;
        if (terminating && (hasCredentialName || hasCredentialNames)) {
            return; // the certificates come from the credential
        }
        if (terminating) {
            String what = mode == ServerTLSSettings.TLSmode.SIMPLE ? "SIMPLE TLS" : "MUTUAL TLS";
            if (mode != ServerTLSSettings.TLSmode.SIMPLE && tls.getCaCertificates().isEmpty()) {
                v.at("caCertificates").error(what + " requires a client CA bundle (caCertificates)");
            }
            if (tls.getTlsCertificatesCount() > 2) {
                v.at("tlsCertificates").warn(what + " supports at most 2 server certificates");
            }
            if (tls.getTlsCertificatesCount() > 0) {
                List<ServerTLSSettings.TLSCertificate> certs = tls.getTlsCertificatesList();
                for (int i = 0; i < certs.size(); i++) {
                    requireCertAndKey(v.at("tlsCertificates", i), what, certs.get(i).getServerCertificate(),
                            certs.get(i).getPrivateKey());
                }
            } else {
                requireCertAndKey(v, what, tls.getServerCertificate(), tls.getPrivateKey());
            }
        }
        if (!tls.getCaCrl().isEmpty()) {
            if (hasCredentialName) {
                v.at("caCrl").error("caCrl cannot be used with credentialName: put the CRL in the credential");
            }
            if (mode == ServerTLSSettings.TLSmode.SIMPLE) {
                v.at("caCrl").error("caCrl is not supported with SIMPLE TLS");
            }
        }
    }

    private static void istioMutualField(Validation v, String field, boolean set) {
        if (set) {
            v.at(field).error("ISTIO_MUTUAL TLS cannot have " + field + " (Istio provides the certificates)");
        }
    }

    private static void requireCertAndKey(Validation v, String what, String cert, String key) {
        if (cert.isEmpty()) {
            v.at("serverCertificate").error(what + " requires a server certificate (or a credentialName)");
        }
        if (key.isEmpty()) {
            v.at("privateKey").error(what + " requires a private key (or a credentialName)");
        }
    }
}
