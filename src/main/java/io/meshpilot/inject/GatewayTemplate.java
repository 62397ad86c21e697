package io.meshpilot.inject;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

/**
 * istiod's {@code gateway} injection template (istio-discovery's gateway-injection-template.yaml),
 * rendered natively: the pod's {@code istio-proxy} container (the istio/gateway chart writes it
 * with {@code image: auto}) becomes a router proxy with the chart's image, arguments, environment,
 * readiness probe on 15021 and volumes; no init container, no traffic capture.
 */
final class GatewayTemplate {
    static final String NAME = "gateway";
    private final SidecarTemplate base;
    private final SidecarTemplate.Input in;
    private final InjectionValues v;

    GatewayTemplate(SidecarTemplate.Input in) {
        this.base = new SidecarTemplate(in);
        this.in = in;
        this.v = in.values();
    }

    JsonObject render() {
        JsonObject spec = new JsonObject();
        spec.add("securityContext", v.truthy("gateways.securityContext") ? v.get("gateways.securityContext").deepCopy()
                : JsonParser.parseString("{\"sysctls\":[{\"name\":\"net.ipv4.ip_unprivileged_port_start\",\"value\":\"0\"}]}"));
        spec.add("initContainers", new JsonArray());
        JsonArray containers = new JsonArray();
        containers.add(proxy());
        spec.add("containers", containers);
        spec.add("volumes", volumes());
        base.addImagePullSecrets(spec);
        return SidecarTemplate.templatePod(base.canonicalLabels(), base.revisionAnnotations(), spec);
    }

    private JsonObject proxy() {
        JsonObject c = SidecarTemplate.named(SidecarTemplate.PROXY);
        c.addProperty("image", base.proxyImage());
        c.add("ports", JsonParser.parseString("[{\"containerPort\":15090,\"protocol\":\"TCP\",\"name\":\"http-envoy-prom\"}]"));
        c.add("args", SidecarTemplate.strings(base.agentArgs("router")));
        if (v.truthy("global.proxy.lifecycle")) {
            c.add("lifecycle", v.get("global.proxy.lifecycle").deepCopy());
        }
        JsonObject securityContext = new JsonObject();
        securityContext.addProperty("runAsUser", 1337);
        securityContext.addProperty("runAsGroup", 1337);
        c.add("securityContext", securityContext);
        JsonArray env = new JsonArray();
        base.podEnv(env);
        env.add(SidecarTemplate.resourceRef("ISTIO_CPU_LIMIT", "limits.cpu"));
        env.add(SidecarTemplate.env("PROXY_CONFIG", in.proxyConfigJson() + "\n"));
        env.add(SidecarTemplate.env("ISTIO_META_POD_PORTS", base.podPorts()));
        env.add(SidecarTemplate.resourceRef("GOMEMLIMIT", "limits.memory"));
        env.add(SidecarTemplate.env("ISTIO_META_APP_CONTAINERS", String.join(",", base.appContainers())));
        base.identityEnv(env, true, in.deploy().name());
        c.add("env", env);
        if (v.truthy("global.imagePullPolicy")) {
            c.addProperty("imagePullPolicy", v.string("global.imagePullPolicy"));
        }
        c.add("readinessProbe", base.readinessProbe(15021, false));
        c.add("volumeMounts", volumeMounts());
        return c;
    }

    private JsonArray volumeMounts() {
        JsonArray m = new JsonArray();
        m.add(SidecarTemplate.mount("workload-socket", "/var/run/secrets/workload-spiffe-uds"));
        m.add(SidecarTemplate.mount("credential-socket", "/var/run/secrets/credential-uds"));
        m.add(base.workloadCertsMount());
        if (v.string("global.pilotCertProvider").equals("istiod")) {
            m.add(SidecarTemplate.mount("istiod-ca-cert", "/var/run/secrets/istio"));
        }
        m.add(SidecarTemplate.mount("istio-data", "/var/lib/istio/data"));
        if (base.annotation("sidecar.istio.io/bootstrapOverride", null) != null) {
            m.add(SidecarTemplate.mount("custom-bootstrap-volume", "/etc/istio/custom-bootstrap"));
        }
        m.add(SidecarTemplate.mount("istio-envoy", "/etc/istio/proxy"));
        m.add(SidecarTemplate.mount("istio-token", "/var/run/secrets/tokens"));
        if (v.truthy("global.mountMtlsCerts")) {
            m.add(SidecarTemplate.mtlsCertsMount());
        }
        m.add(SidecarTemplate.mount("istio-podinfo", "/etc/istio/pod"));
        return m;
    }

    private JsonArray volumes() {
        JsonArray vols = new JsonArray();
        vols.add(SidecarTemplate.named("workload-socket"));
        vols.add(SidecarTemplate.emptyDirVolume("credential-socket"));
        vols.add(base.workloadCertsVolume());
        base.addBootstrapOverrideVolume(vols);
        vols.add(SidecarTemplate.memoryVolume("istio-envoy"));
        base.addAgentVolumes(vols);
        return vols;
    }
}
