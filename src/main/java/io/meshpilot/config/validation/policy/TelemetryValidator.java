package io.meshpilot.config.validation.policy;

import io.meshpilot.api.telemetry.v1alpha1.AccessLogging;
import io.meshpilot.api.telemetry.v1alpha1.MetricSelector;
import io.meshpilot.api.telemetry.v1alpha1.Metrics;
import io.meshpilot.api.telemetry.v1alpha1.MetricsOverrides;
import io.meshpilot.api.telemetry.v1alpha1.ProviderRef;
import io.meshpilot.api.telemetry.v1alpha1.Telemetry;
import io.meshpilot.api.telemetry.v1alpha1.Tracing;
import io.meshpilot.api.telemetry.v1alpha1.WorkloadMode;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Checks;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * istiod's ValidateTelemetry: targeting; provider references with names; tracing sampling
 * 0-100 and custom tags of one kind with their required field; metric overrides with a
 * non-empty custom metric and tag overrides whose value matches the operation; access log
 * filters that parse as CEL; a reporting interval of at least 1ms.
 */
public final class TelemetryValidator implements Validator {
    @Override
    public void validate(Config config, Validation v) {
        PolicyChecks.noDryRun(config, v);
        Telemetry t = (Telemetry) config.spec();
        Validation spec = v.at("spec");
        PolicyChecks.targeting(spec, t.hasSelector() ? t.getSelector() : null,
                t.hasTargetRef() ? t.getTargetRef() : null, t.getTargetRefsList());
        if (t.getTracingCount() > 1) {
            spec.warn("tracing", "only one tracing configuration is supported; the others are ignored");
        }
        for (int i = 0; i < t.getTracingCount(); i++) {
            tracing(spec.at("tracing", i), t.getTracing(i));
        }
        for (int i = 0; i < t.getMetricsCount(); i++) {
            metrics(spec.at("metrics", i), t.getMetrics(i));
        }
        for (int i = 0; i < t.getAccessLoggingCount(); i++) {
            accessLogging(spec.at("accessLogging", i), t.getAccessLogging(i));
        }
    }

    private static void providers(Validation v, List<ProviderRef> providers) {
        for (int i = 0; i < providers.size(); i++) {
            if (providers.get(i).getName().isEmpty()) {
                v.at("providers", i).error("name", "provider name must not be empty");
            }
        }
    }

    private static void mode(Validation v, int value) {
        PolicyChecks.knownEnum(v.at("mode"), WorkloadMode.getDescriptor(), value);
    }

    private static void tracing(Validation v, Tracing tr) {
        if (tr.hasMatch()) {
            mode(v.at("match"), tr.getMatch().getModeValue());
        }
        if (tr.getProvidersCount() > 1) {
            v.warn("providers", "only one tracing provider is supported; the others are ignored");
        }
        providers(v, tr.getProvidersList());
        if (tr.hasRandomSamplingPercentage()) {
            double p = tr.getRandomSamplingPercentage().getValue();
            if (!(p >= 0 && p <= 100)) {
                v.error("randomSamplingPercentage", "must be in the range 0.0..100.0, found " + p);
            }
        }
        Map<String, Tracing.CustomTag> tags = new TreeMap<>(tr.getCustomTagsMap());
        tags.forEach((name, tag) -> {
            Validation at = v.at("customTags").at("[" + name + "]");
            if (name.isEmpty()) {
                at.error("tag name must not be empty");
            }
            switch (tag.getTypeCase()) {
                case LITERAL -> {
                    if (tag.getLiteral().getValue().isEmpty()) {
                        at.error("literal.value", "literal tag value must not be empty");
                    }
                }
                case ENVIRONMENT -> {
                    if (tag.getEnvironment().getName().isEmpty()) {
                        at.error("environment.name", "environment variable name must not be empty");
                    }
                }
                case HEADER -> {
                    if (tag.getHeader().getName().isEmpty()) {
                        at.error("header.name", "header name must not be empty");
                    }
                }
                case FORMATTER -> {
                    // required by the CRD's schema (minLength 1)
                    if (tag.getFormatter().getValue().isEmpty()) {
                        at.error("formatter.value", "formatter value must not be empty");
                    }
                }
                default -> at.error("custom tag must set one of literal, environment, header or formatter");
            }
        });
    }

    private static void metrics(Validation v, Metrics m) {
        providers(v, m.getProvidersList());
        if (m.hasReportingInterval()) {
            Checks.duration(v.at("reportingInterval"), m.getReportingInterval());
        }
        for (int j = 0; j < m.getOverridesCount(); j++) {
            override(v.at("overrides", j), m.getOverrides(j));
        }
    }

    private static void override(Validation v, MetricsOverrides o) {
        if (o.hasMatch()) {
            Validation match = v.at("match");
            MetricSelector sel = o.getMatch();
            if (sel.getMetricMatchCase() == MetricSelector.MetricMatchCase.CUSTOM_METRIC
                    && sel.getCustomMetric().isEmpty()) {
                match.error("customMetric", "custom metric name must not be empty");
            }
            if (sel.getMetricMatchCase() == MetricSelector.MetricMatchCase.METRIC) {
                PolicyChecks.knownEnum(match.at("metric"), MetricSelector.IstioMetric.getDescriptor(),
                        sel.getMetricValue());
            }
            mode(match, sel.getModeValue());
        }
        Map<String, MetricsOverrides.TagOverride> tags = new TreeMap<>(o.getTagOverridesMap());
        tags.forEach((name, tag) -> {
            Validation at = v.at("tagOverrides").at("[" + name + "]");
            if (name.isEmpty()) {
                at.warn("tag name should not be empty");
            }
            PolicyChecks.knownEnum(at.at("operation"), MetricsOverrides.TagOverride.Operation.getDescriptor(),
                    tag.getOperationValue());
            if (tag.getOperation() == MetricsOverrides.TagOverride.Operation.UPSERT && tag.getValue().isEmpty()) {
                at.error("value", "value is required when operation is UPSERT");
            }
            if (tag.getOperation() == MetricsOverrides.TagOverride.Operation.REMOVE && !tag.getValue().isEmpty()) {
                at.error("value", "value must not be set when operation is REMOVE");
            }
        });
    }

    private static void accessLogging(Validation v, AccessLogging al) {
        if (al.hasMatch()) {
            mode(v.at("match"), al.getMatch().getModeValue());
        }
        providers(v, al.getProvidersList());
        if (al.hasFilter()) {
            String why = CelSyntax.check(al.getFilter().getExpression());
            if (why != null) {
                v.error("filter.expression", why);
            }
        }
    }
}
