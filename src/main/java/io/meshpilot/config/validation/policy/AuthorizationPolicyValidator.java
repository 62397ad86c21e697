package io.meshpilot.config.validation.policy;

import io.meshpilot.api.security.v1beta1.AuthorizationPolicy;
import io.meshpilot.api.security.v1beta1.AuthorizationPolicy.Action;
import io.meshpilot.api.security.v1beta1.Condition;
import io.meshpilot.api.security.v1beta1.Operation;
import io.meshpilot.api.security.v1beta1.Rule;
import io.meshpilot.api.security.v1beta1.Source;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Checks;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * istiod's ValidateAuthorizationPolicy: targeting, the dry-run annotation, action and
 * provider (CUSTOM needs a provider and rules, and cannot match on identities), DENY needs
 * rules, and per rule well-formed sources, operations and conditions. A DENY rule that can
 * only match HTTP attributes draws istiod's warning that it denies all TCP traffic.
 */
public final class AuthorizationPolicyValidator implements Validator {
    /** Source fields by JSON name; the identity ones are not supported with CUSTOM. */
    private static final Map<String, Function<Source, List<String>>> SOURCE = new LinkedHashMap<>();
    private static final List<String> SOURCE_IPS = List.of("ipBlocks", "notIpBlocks", "remoteIpBlocks",
            "notRemoteIpBlocks");
    private static final List<String> SOURCE_ACCOUNTS = List.of("serviceAccounts", "notServiceAccounts");
    private static final List<String> SOURCE_TRUST_DOMAINS = List.of("trustDomains", "notTrustDomains");
    private static final List<String> NOT_WITH_CUSTOM = List.of("principals", "notPrincipals",
            "requestPrincipals", "notRequestPrincipals", "namespaces", "notNamespaces", "serviceAccounts",
            "notServiceAccounts", "trustDomains", "notTrustDomains");
    /**
     * Source fields that spare a DENY rule istiod's TCP-ports warning: those istiod's validation
     * counts as TCP rules. Request principals need HTTP; trust domains match TCP peers too, but
     * istiod does not count them, and the warning follows istiod's.
     */
    private static final List<String> SOURCE_TCP = List.of("principals", "notPrincipals", "namespaces",
            "notNamespaces", "serviceAccounts", "notServiceAccounts", "ipBlocks", "notIpBlocks", "remoteIpBlocks",
            "notRemoteIpBlocks");
    private static final Map<String, Function<Operation, List<String>>> OPERATION = new LinkedHashMap<>();

    static {
        SOURCE.put("principals", Source::getPrincipalsList);
        SOURCE.put("notPrincipals", Source::getNotPrincipalsList);
        SOURCE.put("requestPrincipals", Source::getRequestPrincipalsList);
        SOURCE.put("notRequestPrincipals", Source::getNotRequestPrincipalsList);
        SOURCE.put("namespaces", Source::getNamespacesList);
        SOURCE.put("notNamespaces", Source::getNotNamespacesList);
        SOURCE.put("serviceAccounts", Source::getServiceAccountsList);
        SOURCE.put("notServiceAccounts", Source::getNotServiceAccountsList);
        SOURCE.put("trustDomains", Source::getTrustDomainsList);
        SOURCE.put("notTrustDomains", Source::getNotTrustDomainsList);
        SOURCE.put("ipBlocks", Source::getIpBlocksList);
        SOURCE.put("notIpBlocks", Source::getNotIpBlocksList);
        SOURCE.put("remoteIpBlocks", Source::getRemoteIpBlocksList);
        SOURCE.put("notRemoteIpBlocks", Source::getNotRemoteIpBlocksList);
        OPERATION.put("hosts", Operation::getHostsList);
        OPERATION.put("notHosts", Operation::getNotHostsList);
        OPERATION.put("ports", Operation::getPortsList);
        OPERATION.put("notPorts", Operation::getNotPortsList);
        OPERATION.put("methods", Operation::getMethodsList);
        OPERATION.put("notMethods", Operation::getNotMethodsList);
        OPERATION.put("paths", Operation::getPathsList);
        OPERATION.put("notPaths", Operation::getNotPathsList);
    }

    @Override
    public void validate(Config config, Validation v) {
        AuthorizationPolicy ap = (AuthorizationPolicy) config.spec();
        Validation spec = v.at("spec");
        dryRun(config, ap, v);
        PolicyChecks.targeting(spec, ap.hasSelector() ? ap.getSelector() : null,
                ap.hasTargetRef() ? ap.getTargetRef() : null, ap.getTargetRefsList());
        PolicyChecks.knownEnum(spec.at("action"), Action.getDescriptor(), ap.getActionValue());
        Action action = ap.getAction();
        boolean custom = action == Action.CUSTOM;
        if (custom) {
            if (ap.getRulesCount() == 0) {
                spec.error("rules", "a CUSTOM policy without rules never triggers; "
                        + "add an empty rule {} to apply it to every request");
            } else if (!ap.hasProvider()) {
                spec.error("provider", "a CUSTOM policy needs provider.name");
            } else if (ap.getProvider().getName().isEmpty()) {
                spec.error("provider.name", "provider name must not be empty");
            }
        } else if (ap.hasProvider()) {
            spec.error("provider", "provider may only be set with action CUSTOM, found " + actionName(ap));
        }
        if (action == Action.DENY && ap.getRulesCount() == 0) {
            spec.error("rules", "a DENY policy without rules never triggers; "
                    + "add an empty rule {} to deny every request");
        }
        for (int i = 0; i < ap.getRulesCount(); i++) {
            rule(spec.at("rules", i), ap.getRules(i), custom, action == Action.DENY);
        }
    }

    private static String actionName(AuthorizationPolicy ap) {
        return ap.getAction() == Action.UNRECOGNIZED ? String.valueOf(ap.getActionValue()) : ap.getAction().name();
    }

    /** Only AuthorizationPolicy may be a dry run, and only for ALLOW and DENY, with a boolean. */
    private static void dryRun(Config config, AuthorizationPolicy ap, Validation root) {
        String value = config.annotations().get(PolicyChecks.DRY_RUN_ANNOTATION);
        if (value == null) {
            return;
        }
        Validation at = root.at("metadata.annotations[" + PolicyChecks.DRY_RUN_ANNOTATION + "]");
        if (ap.getAction() != Action.ALLOW && ap.getAction() != Action.DENY) {
            at.error("annotation " + PolicyChecks.DRY_RUN_ANNOTATION + " only supports actions ALLOW and DENY, found "
                    + actionName(ap));
        } else if (!PolicyChecks.isGoBool(value)) {
            at.error("annotation " + PolicyChecks.DRY_RUN_ANNOTATION + " must be true or false, found \"" + value + "\"");
        }
    }

    private static void rule(Validation v, Rule rule, boolean custom, boolean deny) {
        boolean fromExists = false;
        boolean tcpInFrom = false;
        boolean toExists = false;
        boolean tcpInTo = false;
        for (int j = 0; j < rule.getFromCount(); j++) {
            Validation from = v.at("from", j);
            if (!rule.getFrom(j).hasSource()) {
                from.error("source", "source is required in a from entry");
                continue;
            }
            fromExists = true;
            Source src = rule.getFrom(j).getSource();
            tcpInFrom |= source(from.at("source"), src, custom);
        }
        for (int j = 0; j < rule.getToCount(); j++) {
            Validation to = v.at("to", j);
            if (!rule.getTo(j).hasOperation()) {
                to.error("operation", "operation is required in a to entry");
                continue;
            }
            toExists = true;
            tcpInTo |= operation(to.at("operation"), rule.getTo(j).getOperation());
        }
        for (int k = 0; k < rule.getWhenCount(); k++) {
            condition(v.at("when", k), rule.getWhen(k), custom);
        }
        if (deny && ((fromExists && !toExists && !tcpInFrom) || (toExists && !tcpInTo))) {
            v.warn("this DENY rule only matches HTTP attributes, so it denies all traffic to TCP ports "
                    + "under the policy's scope; list the ports explicitly");
        }
    }

    /** Returns whether the source has a field that applies to TCP traffic. */
    private static boolean source(Validation v, Source src, boolean custom) {
        boolean any = false;
        boolean tcp = false;
        for (Map.Entry<String, Function<Source, List<String>>> f : SOURCE.entrySet()) {
            String field = f.getKey();
            List<String> values = f.getValue().apply(src);
            if (values.isEmpty()) {
                continue;
            }
            any = true;
            tcp |= SOURCE_TCP.contains(field);
            if (custom && NOT_WITH_CUSTOM.contains(field)) {
                v.error(field, field + " is not supported with action CUSTOM");
            }
            if (SOURCE_ACCOUNTS.contains(field)) {
                serviceAccounts(v, field, values);
            } else if (PolicyChecks.noEmpty(v, field, values)) {
                Function<String, String> check = SOURCE_IPS.contains(field) ? Checks::ipOrCidrProblem
                        : SOURCE_TRUST_DOMAINS.contains(field) ? AuthzValues::trustDomain : value -> null;
                for (int i = 0; i < values.size(); i++) {
                    String why = check.apply(values.get(i));
                    if (why != null) {
                        v.at(field, i).error(why);
                    }
                }
            }
        }
        if (!any) {
            v.error("source must not be empty; set at least one field or remove the from entry");
        }
        boolean accounts = src.getServiceAccountsCount() + src.getNotServiceAccountsCount() > 0;
        if (accounts && src.getPrincipalsCount() + src.getNotPrincipalsCount() + src.getNamespacesCount()
                + src.getNotNamespacesCount() > 0) {
            v.error(src.getServiceAccountsCount() > 0 ? "serviceAccounts" : "notServiceAccounts",
                    "serviceAccounts cannot be combined with principals or namespaces");
        }
        return tcp;
    }

    private static void serviceAccounts(Validation v, String field, List<String> values) {
        if (values.size() > AuthzValues.MAX_SERVICE_ACCOUNTS) {
            v.error(field, "at most " + AuthzValues.MAX_SERVICE_ACCOUNTS + " service accounts are allowed");
        }
        for (int i = 0; i < values.size(); i++) {
            String why = AuthzValues.serviceAccount(values.get(i));
            if (why != null) {
                v.at(field, i).error(why);
            }
        }
    }

    /** Returns whether the operation has ports (the only fields that apply to TCP traffic). */
    private static boolean operation(Validation v, Operation op) {
        boolean any = false;
        for (Map.Entry<String, Function<Operation, List<String>>> f : OPERATION.entrySet()) {
            String field = f.getKey();
            List<String> values = f.getValue().apply(op);
            if (values.isEmpty()) {
                continue;
            }
            any = true;
            if (!PolicyChecks.noEmpty(v, field, values)) {
                continue;
            }
            for (int i = 0; i < values.size(); i++) {
                String why = switch (field) {
                    case "ports", "notPorts" -> AuthzValues.port(values.get(i));
                    case "paths", "notPaths" -> AuthzValues.path(values.get(i));
                    default -> null;
                };
                if (why != null) {
                    v.at(field, i).error(why);
                }
            }
        }
        if (!any) {
            v.error("operation must not be empty; set at least one field or remove the to entry");
        }
        return op.getPortsCount() + op.getNotPortsCount() > 0;
    }

    private static void condition(Validation v, Condition c, boolean custom) {
        String key = c.getKey();
        if (key.isEmpty()) {
            v.error("key", "key is required");
            return;
        }
        if (custom && (key.equals("source.namespace") || key.equals("source.serviceAccount")
                || key.equals("source.trustDomain") || key.equals("source.principal") || key.startsWith("request.auth."))) {
            v.error("key", "condition " + key + " is not supported with action CUSTOM");
        }
        if (c.getValuesCount() == 0 && c.getNotValuesCount() == 0) {
            v.error("at least one of values or notValues must be set for key " + key);
            return;
        }
        String badKey = AuthzValues.conditionKey(key);
        if (badKey != null) {
            v.error("key", badKey);
            return;
        }
        values(v, "values", key, c.getValuesList());
        values(v, "notValues", key, c.getNotValuesList());
    }

    private static void values(Validation v, String field, String key, List<String> values) {
        if (!PolicyChecks.noEmpty(v, field, values)) {
            return;
        }
        AuthzValues.ValueKind kind = AuthzValues.valueKind(key);
        if (kind == AuthzValues.ValueKind.SERVICE_ACCOUNT) {
            serviceAccounts(v, field, values);
            return;
        }
        for (int i = 0; i < values.size(); i++) {
            String why = switch (kind) {
                case IP -> Checks.ipOrCidrProblem(values.get(i));
                case PORT -> AuthzValues.port(values.get(i));
                case WILDCARD -> AuthzValues.wildcard(values.get(i));
                default -> null;
            };
            if (why != null) {
                v.at(field, i).error("invalid value for " + key + ": " + why);
            }
        }
    }
}
