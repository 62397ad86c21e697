package io.meshpilot.config.validation.networking;

import io.meshpilot.api.networking.v1alpha3.HTTPHealthCheckConfig;
import io.meshpilot.api.networking.v1alpha3.ReadinessProbe;
import io.meshpilot.api.networking.v1alpha3.WorkloadGroup;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;

/**
 * istiod's WorkloadGroup rules: a template is required (its address is filled in per workload,
 * so it is not checked as a WorkloadEntry's), metadata labels must be valid, and the readiness
 * probe has non-negative timings and exactly one valid check (httpGet, tcpSocket, exec, grpc).
 */
public final class WorkloadGroupValidator implements Validator {

    @Override
    public void validate(Config config, Validation v) {
        NetworkingChecks.metadata(config, v);
        WorkloadGroup wg = (WorkloadGroup) config.spec();
        Validation spec = v.at("spec");
        if (!wg.hasTemplate()) {
            spec.at("template").error("template is required");
            return;
        }
        if (!wg.getTemplate().getAddress().isEmpty()) {
            spec.at("template").at("address").warn("template address is ignored: each workload registers its own");
        }
        if (wg.hasMetadata()) {
            NetworkingChecks.labels(spec.at("metadata").at("labels"), wg.getMetadata().getLabelsMap());
        }
        if (wg.hasProbe()) {
            probe(spec.at("probe"), wg.getProbe());
        }
    }

    private static void probe(Validation v, ReadinessProbe p) {
        nonNegative(v, "periodSeconds", p.getPeriodSeconds());
        nonNegative(v, "initialDelaySeconds", p.getInitialDelaySeconds());
        nonNegative(v, "timeoutSeconds", p.getTimeoutSeconds());
        nonNegative(v, "successThreshold", p.getSuccessThreshold());
        nonNegative(v, "failureThreshold", p.getFailureThreshold());
        switch (p.getHealthCheckMethodCase()) {
            case HTTP_GET -> {
                HTTPHealthCheckConfig h = p.getHttpGet();
                Validation at = v.at("httpGet");
                NetworkingChecks.port(at.at("port"), Integer.toUnsignedLong(h.getPort()));
                if (!h.getScheme().isEmpty() && !h.getScheme().equals("HTTP") && !h.getScheme().equals("HTTPS")) {
                    at.at("scheme").error("httpGet scheme must be \"HTTP\" or \"HTTPS\"");
                }
                for (int i = 0; i < h.getHttpHeadersCount(); i++) {
                    NetworkingChecks.headerName(at.at("httpHeaders", i).at("name"), h.getHttpHeaders(i).getName(), false);
                }
            }
            case TCP_SOCKET -> NetworkingChecks.port(v.at("tcpSocket").at("port"),
                    Integer.toUnsignedLong(p.getTcpSocket().getPort()));
            case EXEC -> {
                if (p.getExec().getCommandCount() == 0) {
                    v.at("exec").at("command").error("exec command is required");
                }
            }
            case GRPC -> NetworkingChecks.port(v.at("grpc").at("port"), Integer.toUnsignedLong(p.getGrpc().getPort()));
            default -> v.error("probe must have one of httpGet, tcpSocket, exec or grpc");
        }
    }

    private static void nonNegative(Validation v, String field, int value) {
        if (value < 0) {
            v.at(field).error(field + " must not be negative");
        }
    }
}
