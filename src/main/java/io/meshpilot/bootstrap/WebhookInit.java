package io.meshpilot.bootstrap;

import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.inject.InjectWebhook;
import io.meshpilot.inject.SidecarInjector;
import io.meshpilot.lifecycle.StartupRecorder.Built;
import io.meshpilot.model.Environment;
import io.meshpilot.webhook.ValidationWebhook;
import io.meshpilot.webhook.WebhookRoutes;
import java.util.List;

/** The webhooks the webhook listener (15017) serves: config validation and sidecar injection. */
final class WebhookInit {
    private WebhookInit() {
    }

    /**
     * istiod's initConfigValidation: {@code /validate} judges with the config stores' parser.
     * Served in every mode (istiod only with Kubernetes), so config can be checked before it
     * is applied anywhere.
     */
    static String configValidation(ConfigController configs, WebhookRoutes webhooks) {
        webhooks.add(new ValidationWebhook(configs.parser(), Schemas.PILOT));
        return "/validate";
    }

    /**
     * istiod's initSidecarInjector: {@code /inject} on the webhook listener, with the settings of
     * the istio-sidecar-injector ConfigMap in Kubernetes mode (watched) or the chart's defaults.
     */
    static Built<SidecarInjector> sidecarInjector(PilotArgs args, Environment environment, Platform platform,
                                                  WebhookRoutes webhooks, List<AutoCloseable> closeables) {
        SidecarInjector injector = new SidecarInjector(platform.injectorSettings(), environment::mesh, args.revision(),
                args.features().nativeSidecars(), platform.namespaceLabels(), platform.revisionTags(closeables));
        webhooks.addService(new InjectWebhook(injector));
        return new Built<>(injector, "/inject");
    }
}
