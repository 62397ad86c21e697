package io.meshpilot.inject.kubegateway;

import static io.meshpilot.inject.SidecarTemplate.env;
import static io.meshpilot.inject.SidecarTemplate.fieldRef;
import static io.meshpilot.inject.SidecarTemplate.firstNonEmpty;
import static io.meshpilot.inject.SidecarTemplate.mount;
import static io.meshpilot.inject.SidecarTemplate.resourceRef;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.ProxyConfig;
import io.meshpilot.inject.InjectionValues;
import io.meshpilot.inject.SidecarInjector;
import io.meshpilot.inject.SidecarTemplate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The pod of istiod's {@code waypoint} template (istio-discovery's files/waypoint.yaml at
 * 86c9f01), rendered natively: one {@code istio-proxy} container started as
 * {@code pilot-agent proxy waypoint}, with the agent's identity and mesh environment, the
 * {@code global.waypoint.*} resources and scheduling, and the volumes a waypoint's agent needs.
 * Unlike the {@code kube-gateway} pod it has no pod security context, no credential or
 * workload-certificate volumes, and its token's audience is always {@code istio-ca}.
 */
final class WaypointTemplate {
    private static final String CA_AUDIENCE = "istio-ca";

    private final DeploymentInput in;
    private final InjectionValues v;
    private final MeshConfig mesh;
    private final SidecarTemplate proxy;

    WaypointTemplate(DeploymentInput in, InjectionValues values, MeshConfig mesh, SidecarTemplate proxy) {
        this.in = in;
        this.v = values;
        this.mesh = mesh;
        this.proxy = proxy;
    }

    JsonObject podSpec() {
        JsonObject spec = new JsonObject();
        Map<String, String> scheduling = new LinkedHashMap<>();
        scheduling.put("affinity", "global.waypoint.affinity");
        scheduling.put("topologySpreadConstraints", "global.waypoint.topologySpreadConstraints");
        scheduling.put("nodeSelector", "global.waypoint.nodeSelector");
        scheduling.put("tolerations", "global.waypoint.tolerations");
        scheduling.forEach((field, path) -> {
            if (v.truthy(path)) {
                spec.add(field, v.get(path).deepCopy());
            }
        });
        KubeGatewayTemplate.addProxyAndVolumes(spec, in.serviceAccount(), container(), volumes(), proxy);
        return spec;
    }

    private JsonObject container() {
        JsonObject c = SidecarTemplate.named(SidecarTemplate.PROXY);
        c.add("ports", KubeGatewayTemplate.proxyPorts());
        c.addProperty("image", KubeGatewayTemplate.image(in, v, proxy));
        if (v.truthy("global.imagePullPolicy")) {
            c.addProperty("imagePullPolicy", v.string("global.imagePullPolicy"));
        }
        c.add("args", SidecarTemplate.strings(args()));
        c.add("env", proxyEnv());
        if (v.truthy("global.waypoint.resources")) {
            c.add("resources", KubeGatewayTemplate.withoutNulls(v.get("global.waypoint.resources")));
        }
        c.add("startupProbe", KubeGatewayTemplate.probe(30, 1, 1));
        c.add("readinessProbe", KubeGatewayTemplate.probe(4, 0, 15));
        c.add("securityContext", securityContext());
        JsonArray mounts = new JsonArray();
        mounts.add(mount("workload-socket", "/var/run/secrets/workload-spiffe-uds"));
        mounts.add(mount("istiod-ca-cert", "/var/run/secrets/istio"));
        mounts.add(mount("istio-data", "/var/lib/istio/data"));
        mounts.add(mount("istio-envoy", "/etc/istio/proxy"));
        mounts.add(mount("istio-token", "/var/run/secrets/tokens"));
        mounts.add(mount("istio-podinfo", "/etc/istio/pod"));
        c.add("volumeMounts", mounts);
        return c;
    }

    /** {@code pilot-agent proxy waypoint}: the agent's node type is {@code waypoint}. */
    private List<String> args() {
        List<String> args = new ArrayList<>(List.of("proxy", "waypoint", "--domain",
                "$(POD_NAMESPACE).svc." + v.string("global.proxy.clusterDomain"),
                "--serviceCluster", in.serviceAccount() + ".$(POD_NAMESPACE)",
                "--proxyLogLevel", KubeGatewayTemplate.annotation(in, v, "sidecar.istio.io/logLevel", "global.proxy.logLevel"),
                "--proxyComponentLogLevel", KubeGatewayTemplate.annotation(in, v, "sidecar.istio.io/componentLogLevel",
                        "global.proxy.componentLogLevel"),
                "--log_output_level", KubeGatewayTemplate.annotation(in, v, "sidecar.istio.io/agentLogLevel",
                        "global.logging.level")));
        if (v.truthy("global.logAsJson")) {
            args.add("--log_as_json");
        }
        if (v.truthy("global.proxy.outlierLogPath")) {
            args.add("--outlierLogPath=" + v.string("global.proxy.outlierLogPath"));
        }
        return args;
    }

    private JsonArray proxyEnv() {
        JsonArray env = new JsonArray();
        env.add(fieldRef("ISTIO_META_SERVICE_ACCOUNT", "spec.serviceAccountName"));
        env.add(fieldRef("ISTIO_META_NODE_NAME", "spec.nodeName"));
        proxy.podEnv(env);
        env.add(resourceRef("ISTIO_CPU_LIMIT", "limits.cpu"));
        ProxyConfig pc = mesh.getDefaultConfig();
        env.add(env("PROXY_CONFIG", SidecarInjector.proxyConfigJson(pc) + "\n"));
        new TreeMap<>(pc.getProxyMetadataMap()).forEach((k, val) -> env.add(env(k, val)));
        env.add(resourceRef("GOMEMLIMIT", "limits.memory"));
        // the template's own default, not this istiod's cluster id
        env.add(env("ISTIO_META_CLUSTER_ID", firstNonEmpty(v.string("global.multiCluster.clusterName"), "Kubernetes")));
        KubeGatewayTemplate.addNetworkEnv(env, in, v);
        env.add(env("ISTIO_META_INTERCEPTION_MODE", "REDIRECT"));
        KubeGatewayTemplate.addWorkloadAndMeshEnv(env, in, v, mesh);
        return env;
    }

    private JsonObject securityContext() {
        JsonObject sc = new JsonObject();
        sc.addProperty("privileged", false);
        if (!v.string("global.platform").equals("openshift")) {
            sc.addProperty("runAsGroup", 1337);
            sc.addProperty("runAsUser", 1337);
        }
        sc.addProperty("allowPrivilegeEscalation", false);
        sc.addProperty("readOnlyRootFilesystem", true);
        sc.addProperty("runAsNonRoot", true);
        JsonObject capabilities = new JsonObject();
        capabilities.add("drop", SidecarTemplate.strings(List.of("ALL")));
        sc.add("capabilities", capabilities);
        if (v.truthy("gateways.seccompProfile")) {
            sc.add("seccompProfile", v.get("gateways.seccompProfile").deepCopy());
        }
        return sc;
    }

    private JsonArray volumes() {
        JsonArray vols = new JsonArray();
        vols.add(SidecarTemplate.named("workload-socket"));
        vols.add(SidecarTemplate.memoryVolume("istio-envoy"));
        vols.add(SidecarTemplate.memoryVolume("go-proxy-envoy"));
        vols.add(SidecarTemplate.emptyDirVolume("istio-data"));
        vols.add(SidecarTemplate.emptyDirVolume("go-proxy-data"));
        vols.add(SidecarTemplate.podInfoVolume());
        JsonObject token = proxy.tokenVolume();
        token.getAsJsonObject("projected").getAsJsonArray("sources").get(0).getAsJsonObject()
                .getAsJsonObject("serviceAccountToken").addProperty("audience", CA_AUDIENCE);
        vols.add(token);
        vols.add(proxy.istiodCaVolume());
        return vols;
    }
}
