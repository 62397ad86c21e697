package io.meshpilot.registry.multicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What a remote Secret's kubeconfig may hold, as istiod's BuildClientsFromConfig and sanitizeKubeConfig decide. */
class RemoteKubeconfigTest {
    static String kubeconfig(String user) {
        return """
                apiVersion: v1
                kind: Config
                clusters: [{name: c2, cluster: {server: "https://10.0.0.2:6443", certificate-authority-data: Zm9v}}]
                contexts: [{name: c2, context: {cluster: c2, user: u}}]
                current-context: c2
                users: [{name: u, user: %s}]
                """.formatted(user);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "inline token            | {token: abc}",
            "inline client cert      | {client-certificate-data: Zm9v, client-key-data: YmFy}",
            "oidc auth provider      | {auth-provider: {name: oidc, config: {id-token: x}}}",
            "basic auth              | {username: u, password: p}",
    })
    void usableKubeconfigsNameTheirServer(String what, String user) {
        assertEquals("https://10.0.0.2:6443", RemoteKubeconfig.parse(kubeconfig(user)).getServer(), what);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "empty                 | ''                                                    | kubeconfig is empty",
            "not YAML              | 'clusters: [ {server: '                                | kubeconfig cannot be loaded",
            "a YAML list           | '- a'                                                 | kubeconfig cannot be loaded",
            "no server             | 'apiVersion: v1\nkind: Config\ncurrent-context: none' | names no cluster server",
            "client key file       | USER {client-key: /etc/key.pem}                       | clientKey is not allowed",
            "client cert file      | USER {client-certificate: /etc/cert.pem}              | clientCertificate is not allowed",
            "token file            | USER {tokenFile: /var/run/secrets/token}              | tokenFile is not allowed",
            "exec                  | USER {exec: {command: /bin/sh}}                       | exec is not allowed",
            "gcp auth provider     | USER {auth-provider: {name: gcp}}                     | auth provider gcp is not allowed",
    })
    void refusedKubeconfigsSayWhy(String what, String text, String reason) {
        String kubeconfig = text.startsWith("USER ") ? kubeconfig(text.substring(5))
                : text.replace("\\n", "\n");
        var e = assertThrows(IllegalArgumentException.class, () -> RemoteKubeconfig.parse(kubeconfig), what);
        assertTrue(e.getMessage().contains(reason), what + ": " + e.getMessage());
    }
}
