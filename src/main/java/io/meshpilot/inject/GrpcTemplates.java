package io.meshpilot.inject;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.List;

/**
 * istiod's templates for proxyless gRPC applications (istio-discovery's grpc-agent.yaml and
 * grpc-simple.yaml), rendered natively. {@code grpc-agent}: an {@code istio-proxy} container
 * running only the agent (no Envoy, no capture), which serves the gRPC bootstrap and
 * certificates over a shared volume the app containers mount. {@code grpc-simple}: no agent, an
 * init container writing a plaintext bootstrap for istiod's 15010.
 */
final class GrpcTemplates {
    static final String AGENT = "grpc-agent";
    static final String SIMPLE = "grpc-simple";
    private static final String NO_PROBE_REWRITE = "sidecar.istio.io/rewriteAppHTTPProbers";

    private final SidecarTemplate base;
    private final SidecarTemplate.Input in;
    private final InjectionValues v;

    GrpcTemplates(SidecarTemplate.Input in) {
        this.base = new SidecarTemplate(in);
        this.in = in;
        this.v = in.values();
    }

    JsonObject renderAgent() {
        JsonObject annotations = base.revisionAnnotations();
        annotations.addProperty(NO_PROBE_REWRITE, "false");
        JsonArray containers = new JsonArray();
        containers.add(agent());
        for (String app : base.appContainers()) {
            JsonObject c = SidecarTemplate.named(app);
            JsonArray env = new JsonArray();
            env.add(SidecarTemplate.env("GRPC_XDS_EXPERIMENTAL_SECURITY_SUPPORT", "true"));
            env.add(SidecarTemplate.env("GRPC_XDS_BOOTSTRAP", "/etc/istio/proxy/grpc-bootstrap.json"));
            c.add("env", env);
            JsonArray mounts = new JsonArray();
            mounts.add(SidecarTemplate.mount("istio-data", "/var/lib/istio/data"));
            mounts.add(SidecarTemplate.mount("istio-xds", "/etc/istio/proxy"));
            mounts.add(base.workloadCertsMount());
            c.add("volumeMounts", mounts);
            containers.add(c);
        }
        JsonArray vols = new JsonArray();
        vols.add(SidecarTemplate.named("workload-socket"));
        vols.add(base.workloadCertsVolume());
        base.addBootstrapOverrideVolume(vols);
        vols.add(SidecarTemplate.memoryVolume("istio-xds"));
        base.addAgentVolumes(vols);
        base.userEntries("sidecar.istio.io/userVolume").forEach(vols::add);
        JsonObject spec = new JsonObject();
        spec.add("initContainers", new JsonArray());
        spec.add("containers", containers);
        spec.add("volumes", vols);
        base.addImagePullSecrets(spec);
        return SidecarTemplate.templatePod(base.canonicalLabels(), annotations, spec);
    }

    private JsonObject agent() {
        JsonObject c = SidecarTemplate.named(SidecarTemplate.PROXY);
        c.addProperty("image", base.proxyImage());
        c.add("ports", JsonParser.parseString("[{\"containerPort\":15020,\"protocol\":\"TCP\",\"name\":\"mesh-metrics\"}]"));
        c.add("args", SidecarTemplate.strings(base.agentArgs("sidecar")));
        c.add("lifecycle", JsonParser.parseString("{\"postStart\":{\"exec\":{\"command\":[\"pilot-agent\",\"wait\","
                + "\"--url=http://localhost:15020/healthz/ready\"]}}}"));
        JsonArray env = new JsonArray();
        env.add(SidecarTemplate.env("ISTIO_META_GENERATOR", "grpc"));
        env.add(SidecarTemplate.env("OUTPUT_CERTS", "/var/lib/istio/data"));
        if (in.localhostInbound()) {
            env.add(SidecarTemplate.env("REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION", "true"));
        }
        base.podEnv(env);
        env.add(SidecarTemplate.env("PROXY_CONFIG", in.proxyConfigJson() + "\n"));
        env.add(SidecarTemplate.env("ISTIO_META_POD_PORTS", base.podPorts()));
        env.add(SidecarTemplate.env("ISTIO_META_APP_CONTAINERS", String.join(",", base.appContainers())));
        base.identityEnv(env, false, in.deploy().name());
        env.add(SidecarTemplate.env("ISTIO_META_DNS_CAPTURE", "false")); // gRPC resolves xds:/// names itself
        env.add(SidecarTemplate.env("DISABLE_ENVOY", "true"));
        c.add("env", env);
        if (v.truthy("global.imagePullPolicy")) {
            c.addProperty("imagePullPolicy", v.string("global.imagePullPolicy"));
        }
        // the template's readiness probe, resources and mounts are all under its status-port condition
        if (!base.statusPort().equals("0")) {
            c.add("readinessProbe", base.readinessProbe(15020, true));
            c.add("resources", base.resources());
            JsonArray m = new JsonArray();
            m.add(SidecarTemplate.mount("workload-socket", "/var/run/secrets/workload-spiffe-uds"));
            m.add(base.workloadCertsMount());
            if (v.string("global.pilotCertProvider").equals("istiod")) {
                m.add(SidecarTemplate.mount("istiod-ca-cert", "/var/run/secrets/istio"));
            }
            m.add(SidecarTemplate.mount("istio-data", "/var/lib/istio/data"));
            m.add(SidecarTemplate.mount("istio-xds", "/etc/istio/proxy"));
            m.add(SidecarTemplate.mount("istio-token", "/var/run/secrets/tokens"));
            if (v.truthy("global.mountMtlsCerts")) {
                m.add(SidecarTemplate.mtlsCertsMount());
            }
            m.add(SidecarTemplate.mount("istio-podinfo", "/etc/istio/pod"));
            base.userEntries("sidecar.istio.io/userVolumeMount").forEach(m::add);
            c.add("volumeMounts", m);
        }
        return c;
    }

    JsonObject renderSimple() {
        JsonObject annotations = new JsonObject();
        annotations.addProperty(NO_PROBE_REWRITE, "false");
        JsonObject init = SidecarTemplate.named("grpc-bootstrap-init");
        init.addProperty("image", "busybox:1.28");
        JsonArray initMounts = new JsonArray();
        initMounts.add(SidecarTemplate.mount("grpc-io-proxyless-bootstrap", "/var/lib/grpc/data/"));
        init.add("volumeMounts", initMounts);
        JsonArray env = new JsonArray();
        env.add(SidecarTemplate.fieldRef("INSTANCE_IP", "status.podIP"));
        env.add(SidecarTemplate.fieldRef("POD_NAME", "metadata.name"));
        env.add(SidecarTemplate.fieldRef("POD_NAMESPACE", "metadata.namespace"));
        env.add(SidecarTemplate.env("ISTIO_NAMESPACE", v.string("global.istioNamespace") + "\n"));
        init.add("env", env);
        init.add("command", SidecarTemplate.strings(List.of("sh", "-c", SIMPLE_BOOTSTRAP)));
        JsonArray inits = new JsonArray();
        inits.add(init);
        JsonArray containers = new JsonArray();
        for (var c : Pods.array(in.pod(), "containers")) {
            JsonObject app = SidecarTemplate.named(Pods.string(c.getAsJsonObject(), "name"));
            JsonArray appEnv = new JsonArray();
            appEnv.add(SidecarTemplate.env("GRPC_XDS_BOOTSTRAP", "/var/lib/grpc/data/bootstrap.json"));
            appEnv.add(SidecarTemplate.env("GRPC_GO_LOG_VERBOSITY_LEVEL", "99"));
            appEnv.add(SidecarTemplate.env("GRPC_GO_LOG_SEVERITY_LEVEL", "info"));
            app.add("env", appEnv);
            JsonArray mounts = new JsonArray();
            mounts.add(SidecarTemplate.mount("grpc-io-proxyless-bootstrap", "/var/lib/grpc/data/"));
            app.add("volumeMounts", mounts);
            containers.add(app);
        }
        JsonArray vols = new JsonArray();
        vols.add(SidecarTemplate.emptyDirVolume("grpc-io-proxyless-bootstrap"));
        JsonObject spec = new JsonObject();
        spec.add("initContainers", inits);
        spec.add("containers", containers);
        spec.add("volumes", vols);
        return SidecarTemplate.templatePod(new JsonObject(), annotations, spec);
    }

    /** The grpc-simple init container's script: the bootstrap file a proxyless gRPC client reads. */
    private static final String SIMPLE_BOOTSTRAP = """
            NODE_ID="sidecar~${INSTANCE_IP}~${POD_NAME}.${POD_NAMESPACE}~cluster.local"
            SERVER_URI="dns:///istiod.${ISTIO_NAMESPACE}.svc:15010"
            echo '
            {
              "xds_servers": [
                {
                  "server_uri": "'${SERVER_URI}'",
                  "channel_creds": [{"type": "insecure"}],
                  "server_features" : ["xds_v3"]
                }
              ],
              "node": {
                "id": "'${NODE_ID}'",
                "metadata": {
                  "GENERATOR": "grpc"
                }
              }
            }' > /var/lib/grpc/data/bootstrap.json""";
}
