package io.meshpilot.security.jwt;

import io.meshpilot.security.Authenticator.AuthenticationException;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.MalformedClaimException;

/**
 * The Kubernetes service account a verified token speaks for, read from either claim form
 * Kubernetes issues: the structured {@code kubernetes.io} claim
 * ({@code {"namespace": ns, "serviceaccount": {"name": sa}}}) of projected tokens, or the
 * subject {@code system:serviceaccount:<ns>:<sa>} (the only form istiod reads).
 */
record ServiceAccount(String namespace, String name) {
    private static final String SUBJECT_PREFIX = "system:serviceaccount:";
    // Kubernetes object names; they also keep '/' and other URI syntax out of the SPIFFE id.
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");

    /**
     * The service account of {@code claims}, empty when the token carries neither form.
     *
     * @throws AuthenticationException when a form is present but unusable, or the two disagree
     */
    static Optional<ServiceAccount> of(JwtClaims claims) throws AuthenticationException {
        Optional<ServiceAccount> structured = fromKubernetesClaim(claims.getClaimValue("kubernetes.io"));
        Optional<ServiceAccount> subject = fromSubject(claims);
        if (structured.isPresent() && subject.isPresent() && !structured.equals(subject)) {
            throw new AuthenticationException("identity claims disagree (kubernetes.io and sub)");
        }
        Optional<ServiceAccount> sa = structured.or(() -> subject);
        if (sa.isPresent() && !(DNS_LABEL.matcher(sa.get().namespace).matches()
                && DNS_SUBDOMAIN.matcher(sa.get().name).matches())) {
            throw new AuthenticationException("invalid service account identity");
        }
        return sa;
    }

    /** istiod's identity template: {@code spiffe://<trust domain>/ns/<namespace>/sa/<name>}. */
    String spiffeId(String trustDomain) {
        return "spiffe://" + trustDomain + "/ns/" + namespace + "/sa/" + name;
    }

    private static Optional<ServiceAccount> fromKubernetesClaim(Object claim) {
        if (claim instanceof Map<?, ?> k8s && k8s.get("namespace") instanceof String ns
                && k8s.get("serviceaccount") instanceof Map<?, ?> sa && sa.get("name") instanceof String name) {
            return Optional.of(new ServiceAccount(ns, name));
        }
        return Optional.empty();
    }

    private static Optional<ServiceAccount> fromSubject(JwtClaims claims) throws AuthenticationException {
        String sub;
        try {
            sub = claims.getSubject();
        } catch (MalformedClaimException e) {
            throw new AuthenticationException("malformed token: sub is not a string");
        }
        if (sub == null || !sub.startsWith(SUBJECT_PREFIX)) {
            return Optional.empty();
        }
        String[] parts = sub.substring(SUBJECT_PREFIX.length()).split(":", -1);
        if (parts.length != 2) {
            throw new AuthenticationException("invalid service account identity");
        }
        return Optional.of(new ServiceAccount(parts[0], parts[1]));
    }
}
