package io.meshpilot.config.validation.policy;

import io.meshpilot.api.extensions.v1alpha1.EnvValueSource;
import io.meshpilot.api.extensions.v1alpha1.EnvVar;
import io.meshpilot.api.extensions.v1alpha1.FailStrategy;
import io.meshpilot.api.extensions.v1alpha1.PluginPhase;
import io.meshpilot.api.extensions.v1alpha1.PluginType;
import io.meshpilot.api.extensions.v1alpha1.PullPolicy;
import io.meshpilot.api.extensions.v1alpha1.WasmPlugin;
import io.meshpilot.api.type.v1beta1.WorkloadMode;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * istiod's ValidateWasmPlugin (plus the CRD's rules): targeting; a url with scheme oci, http,
 * https or file, or a bare image reference; a lower-case hex sha256; length limits; known
 * phase, pull policy, fail strategy and type; unique env names whose value only comes inline;
 * match ports 1-65535.
 */
public final class WasmPluginValidator implements Validator {
    private static final Set<String> SCHEMES = Set.of("", "oci", "http", "https", "file");
    private static final Pattern SHA256 = Pattern.compile("[a-f0-9]{64}");
    private static final int MAX_SECRET_NAME = 253;
    private static final int MAX_NAME = 256;

    @Override
    public void validate(Config config, Validation v) {
        PolicyChecks.noDryRun(config, v);
        WasmPlugin w = (WasmPlugin) config.spec();
        Validation spec = v.at("spec");
        PolicyChecks.targeting(spec, w.hasSelector() ? w.getSelector() : null,
                w.hasTargetRef() ? w.getTargetRef() : null, w.getTargetRefsList());
        url(spec.at("url"), w.getUrl());
        if (!w.getSha256().isEmpty() && !SHA256.matcher(w.getSha256()).matches()) {
            spec.error("sha256", "sha256 must be 64 lower-case hex characters");
        }
        if (w.getImagePullSecret().length() > MAX_SECRET_NAME) {
            spec.error("imagePullSecret", "imagePullSecret must be at most " + MAX_SECRET_NAME + " characters");
        }
        if (w.getPluginName().length() > MAX_NAME) {
            spec.error("pluginName", "pluginName must be at most " + MAX_NAME + " characters");
        }
        PolicyChecks.knownEnum(spec.at("phase"), PluginPhase.getDescriptor(), w.getPhaseValue());
        PolicyChecks.knownEnum(spec.at("imagePullPolicy"), PullPolicy.getDescriptor(), w.getImagePullPolicyValue());
        PolicyChecks.knownEnum(spec.at("failStrategy"), FailStrategy.getDescriptor(), w.getFailStrategyValue());
        PolicyChecks.knownEnum(spec.at("type"), PluginType.getDescriptor(), w.getTypeValue());
        Set<String> names = new HashSet<>();
        for (int i = 0; i < w.getVmConfig().getEnvCount(); i++) {
            env(spec.at("vmConfig").at("env", i), w.getVmConfig().getEnv(i), names);
        }
        for (int i = 0; i < w.getMatchCount(); i++) {
            WasmPlugin.TrafficSelector sel = w.getMatch(i);
            Validation at = spec.at("match", i);
            PolicyChecks.knownEnum(at.at("mode"), WorkloadMode.getDescriptor(), sel.getModeValue());
            for (int j = 0; j < sel.getPortsCount(); j++) {
                int port = sel.getPorts(j).getNumber();
                if (port == 0 || Integer.compareUnsigned(port, 65535) > 0) {
                    at.at("ports", j).error("number", "port number " + Integer.toUnsignedString(port)
                            + " must be in the range 1..65535");
                }
            }
        }
    }

    private static void url(Validation v, String url) {
        if (url.isEmpty()) {
            v.error("url is required");
            return;
        }
        UrlSyntax.Url parsed;
        try {
            parsed = UrlSyntax.parseRequestUri(url);
        } catch (UrlSyntax.Invalid first) {
            try {
                // a bare image reference, such as ghcr.io/org/plugin:1.0
                parsed = UrlSyntax.parseRequestUri("http://" + url);
            } catch (UrlSyntax.Invalid e) {
                v.error("\"" + url + "\" is not a valid URL: " + first.getMessage());
                return;
            }
        }
        if (!SCHEMES.contains(parsed.scheme())) {
            v.error("unsupported URL scheme \"" + parsed.scheme() + "\"; use oci://, http://, https://, file:// "
                    + "or a bare image reference");
        }
    }

    private static void env(Validation v, EnvVar env, Set<String> names) {
        if (env.getName().isEmpty()) {
            v.error("name", "env name is required");
        } else if (env.getName().length() > MAX_NAME) {
            v.error("name", "env name must be at most " + MAX_NAME + " characters");
        } else if (!names.add(env.getName())) {
            v.error("name", "duplicate env name \"" + env.getName() + "\"");
        }
        PolicyChecks.knownEnum(v.at("valueFrom"), EnvValueSource.getDescriptor(), env.getValueFromValue());
        if (env.getValueFrom() != EnvValueSource.INLINE && !env.getValue().isEmpty()) {
            v.error("value", "value may only be set when valueFrom is INLINE");
        }
    }
}
