package io.meshpilot.testing.kube;

/** Webhook configurations as istiod's chart installs them, for tests that watch istiod patch them. */
public final class IstioWebhooks {
    private IstioWebhooks() {
    }

    /** istiod's chart's validator: failurePolicy Ignore and no caBundle until istiod patches it. */
    public static String validator() {
        return """
                apiVersion: admissionregistration.k8s.io/v1
                kind: ValidatingWebhookConfiguration
                metadata:
                  name: istio-validator-istio-system
                  labels: {app: istiod, istio: istiod, istio.io/rev: default}
                webhooks:
                - name: rev.validation.istio.io
                  admissionReviewVersions: [v1, v1beta1]
                  timeoutSeconds: 10
                  clientConfig:
                    service: {name: istiod, namespace: istio-system, path: /validate}
                    caBundle: ""
                  failurePolicy: Ignore
                  sideEffects: None
                  rules:
                  - operations: [CREATE, UPDATE]
                    apiGroups: [security.istio.io, networking.istio.io, telemetry.istio.io, extensions.istio.io]
                    apiVersions: ["*"]
                    resources: ["*"]
                """;
    }
}
