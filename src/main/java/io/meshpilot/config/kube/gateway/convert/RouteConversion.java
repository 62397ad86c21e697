package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import io.meshpilot.api.networking.v1alpha3.TCPRoute;
import io.meshpilot.api.networking.v1alpha3.TLSRoute;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.config.kube.gateway.ReferenceGrants;
import io.meshpilot.config.kube.gateway.RouteAttachment;
import io.meshpilot.config.kube.gateway.RouteParents;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * HTTPRoutes, GRPCRoutes, TCPRoutes and TLSRoutes into VirtualServices against the listeners
 * the Gateway conversion found, and BackendTLSPolicies into DestinationRules (istiod's route
 * collections and backend_policies.go). Each route is resolved against its parents, converted
 * once in the gateway form (ReferenceGrants enforced) and once in the mesh form when it has
 * those parents, reported in its status, and turned into VirtualServices; HTTP and gRPC ones
 * are then merged per listener and host.
 */
public final class RouteConversion {
    private RouteConversion() {
    }

    /**
     * @param statuses     each route's (and BackendTLSPolicy's) status
     * @param attachments  every route accepted by a listener, for the parents' attachedRoutes
     * @param problems     what could not be converted, by object
     */
    public record Output(List<Config> virtualServices, List<Config> destinationRules,
                         Map<ConfigKey, JsonObject> statuses, List<RouteAttachment> attachments,
                         Map<ConfigKey, List<String>> problems) {
    }

    /** A rule converter: the routes of one form (mesh or gateway) of a route, in rule order. */
    @FunctionalInterface
    private interface RuleTranslator<T> {
        List<Converted<T>> translate(GatewayApiObject route, boolean mesh);
    }

    /** The routes of one form, or none and the error when a rule failed hard (istiod's conversionResult). */
    private record Rules<T>(List<T> routes, ConfigError error) {
        static <T> Rules<T> none() {
            return new Rules<>(List.of(), null);
        }
    }

    /** A route resolved against its parents and converted in the forms they need. */
    private record Computed<T>(List<RouteParentRef> parents, Rules<T> mesh, Rules<T> gateway) {
    }

    public static Output convert(GatewayApiInputs inputs, ReferenceGrants grants, RouteParents parents) {
        return new Run(inputs, grants, parents, Instant.now()).convert();
    }

    /** One conversion's state: what it has produced so far. */
    private static final class Run {
        private final GatewayApiInputs inputs;
        private final RouteParentsResolver resolver;
        private final RouteStatusReport statusReport;
        private final RouteVirtualServices virtualServices;
        private final HttpRouteConversion http;
        private final GrpcRouteConversion grpc;
        private final TcpTlsRouteConversion tcpTls;
        private final List<RouteMerge.Keyed> httpAndGrpc = new ArrayList<>();
        private final List<Config> tcpAndTls = new ArrayList<>();
        private final Map<ConfigKey, JsonObject> statuses = new TreeMap<>();
        private final List<RouteAttachment> attachments = new ArrayList<>();
        private final Map<ConfigKey, List<String>> problems = new TreeMap<>();
        private final Instant now;

        Run(GatewayApiInputs inputs, ReferenceGrants grants, RouteParents parents, Instant now) {
            this.inputs = inputs;
            this.now = now;
            Backends backends = new Backends(inputs, grants);
            this.resolver = new RouteParentsResolver(inputs, parents);
            this.statusReport = new RouteStatusReport(inputs.settings().controllerName(), now);
            this.virtualServices = new RouteVirtualServices();
            this.http = new HttpRouteConversion(backends);
            this.grpc = new GrpcRouteConversion(backends);
            this.tcpTls = new TcpTlsRouteConversion(backends);
        }

        Output convert() {
            for (GatewayApiObject route : inputs.ofKind(GatewayApiKinds.HTTP_ROUTE)) {
                Computed<HTTPRoute> c = compute(route, perMatch(http::convert));
                httpAndGrpc.addAll(virtualServices.http(route, c.parents(), c.mesh().routes(), c.gateway().routes()));
            }
            for (GatewayApiObject route : inputs.ofKind(GatewayApiKinds.GRPC_ROUTE)) {
                Computed<HTTPRoute> c = compute(route, perMatch(grpc::convert));
                httpAndGrpc.addAll(virtualServices.http(route, c.parents(), c.mesh().routes(), c.gateway().routes()));
            }
            for (GatewayApiObject route : inputs.ofKind(GatewayApiKinds.TCP_ROUTE)) {
                Computed<TCPRoute> c = compute(route, perRule((r, rule, mesh) -> tcpTls.tcp(r, rule, !mesh)));
                tcpAndTls.addAll(virtualServices.tcp(route, c.parents(), c.mesh().routes(), c.gateway().routes()));
            }
            for (GatewayApiObject route : inputs.ofKind(GatewayApiKinds.TLS_ROUTE)) {
                Computed<TLSRoute> c = compute(route, perRule((r, rule, mesh) -> tcpTls.tls(r, rule, !mesh)));
                tcpAndTls.addAll(virtualServices.tls(route, c.parents(), c.mesh().routes(), c.gateway().routes()));
            }
            List<Config> all = new ArrayList<>(tcpAndTls);
            all.addAll(RouteMerge.merge(httpAndGrpc));
            BackendTlsPolicyConversion.Output policies = BackendTlsPolicyConversion.convert(inputs, now);
            statuses.putAll(policies.statuses());
            problems.putAll(policies.problems());
            return new Output(all, policies.destinationRules(), statuses, attachments, problems);
        }

        /** istiod's computeRoute: parents, the forms they need, the status, the attachments. */
        private <T> Computed<T> compute(GatewayApiObject route, RuleTranslator<T> translator) {
            List<RouteParentRef> parents = resolver.resolve(route);
            boolean needMesh = parents.stream().anyMatch(RouteParentRef::mesh);
            boolean needGateway = parents.stream().anyMatch(p -> !p.mesh());
            Rules<T> mesh = needMesh ? rules(translator.translate(route, true)) : Rules.none();
            Rules<T> gateway = needGateway ? rules(translator.translate(route, false)) : Rules.none();
            List<RouteStatusReport.ParentResult> results = parents.stream()
                    .map(p -> new RouteStatusReport.ParentResult(p, p.mesh() ? mesh.error() : gateway.error()))
                    .toList();
            statuses.put(route.key(), statusReport.status(route, results));
            for (RouteParentRef p : parents) {
                String kind = p.parent().kind();
                if (p.accepted() && (kind.equals(GatewayApiKinds.GATEWAY) || kind.equals(GatewayApiKinds.LISTENER_SET))) {
                    attachments.add(new RouteAttachment(p.parent(), p.sectionName(), route.key()));
                }
            }
            report(route, parents, mesh, gateway);
            return new Computed<>(parents, mesh, gateway);
        }

        /** What could not be converted, for config-errors: denied parents, route errors. */
        private void report(GatewayApiObject route, List<RouteParentRef> parents, Rules<?> mesh, Rules<?> gateway) {
            List<String> found = new ArrayList<>();
            if (parents.stream().noneMatch(RouteParentRef::accepted) && !parents.isEmpty()) {
                parents.stream().map(p -> "parentRef " + RouteParentsResolver.parentRefString(p.original(),
                                route.namespace()) + " (" + p.sectionName() + "): " + p.denied().reason() + ": "
                                + p.denied().message())
                        .distinct().forEach(found::add);
            }
            for (Rules<?> form : List.of(gateway, mesh)) {
                if (form.error() != null) {
                    String problem = form.error().reason() + ": " + form.error().message();
                    if (!found.contains(problem)) {
                        found.add(problem);
                    }
                }
            }
            if (!found.isEmpty()) {
                problems.put(route.key(), List.copyOf(found));
            }
        }

        private static <T> Rules<T> rules(List<Converted<T>> converted) {
            List<T> routes = new ArrayList<>();
            ConfigError error = null;
            for (Converted<T> c : converted) {
                if (c.hardError()) {
                    return new Rules<>(List.of(), c.error());
                }
                if (c.error() != null) {
                    error = c.error();
                }
                routes.add(c.value());
            }
            return new Rules<>(List.copyOf(routes), error);
        }
    }

    /** A rule converter taking one match at a time (a rule without matches as one route without match). */
    @FunctionalInterface
    private interface MatchConverter<T> {
        Converted<T> convert(GatewayApiObject route, JsonObject rule, Optional<JsonObject> match, int index,
                             boolean enforceGrants);
    }

    /** HTTP and gRPC: each rule split so that every generated route has at most one match. */
    private static <T> RuleTranslator<T> perMatch(MatchConverter<T> converter) {
        return (route, mesh) -> {
            List<Converted<T>> out = new ArrayList<>();
            List<JsonObject> rules = JsonFields.objects(route.spec(), "rules");
            for (int i = 0; i < rules.size(); i++) {
                List<JsonObject> matches = JsonFields.objects(rules.get(i), "matches");
                if (matches.isEmpty()) {
                    out.add(converter.convert(route, rules.get(i), Optional.empty(), i, !mesh));
                }
                for (JsonObject match : matches) {
                    Converted<T> c = converter.convert(route, rules.get(i), Optional.of(match), i, !mesh);
                    out.add(c);
                    if (c.hardError()) {
                        return out;
                    }
                }
            }
            return out;
        };
    }

    @FunctionalInterface
    private interface L4Converter<T> {
        Converted<T> convert(GatewayApiObject route, JsonObject rule, boolean mesh);
    }

    /** TCP and TLS: one route per rule. */
    private static <T> RuleTranslator<T> perRule(L4Converter<T> converter) {
        return (route, mesh) -> JsonFields.objects(route.spec(), "rules").stream()
                .map(rule -> converter.convert(route, rule, mesh)).toList();
    }
}
