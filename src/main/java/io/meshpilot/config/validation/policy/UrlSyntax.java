package io.meshpilot.config.validation.policy;

import io.meshpilot.util.IpAddr;
import java.util.Locale;

/**
 * URL syntax as istiod checks it (Go's net/url): a scheme is the text before the first ":"
 * when every character up to there may be part of one; an authority after "//" has a host of
 * allowed characters, valid %-escapes and an optional numeric port. {@link #parse} reads a URL
 * reference, {@link #parseRequestUri} the stricter request form (absolute URL or absolute path).
 */
public final class UrlSyntax {
    /** The parts istiod looks at; scheme is lower case, "" when there is none. */
    public record Url(String scheme, String host, String port) {
    }

    /** Thrown with the reason a string is no URL. */
    public static final class Invalid extends Exception {
        Invalid(String message) {
            super(message, null, false, false);
        }
    }

    private UrlSyntax() {
    }

    /** Go's url.Parse: a fragment is allowed, a relative reference too. */
    public static Url parse(String s) throws Invalid {
        int hash = s.indexOf('#');
        String rest = hash < 0 ? s : s.substring(0, hash);
        if (hash >= 0) {
            escapes(s.substring(hash + 1), "fragment");
        }
        return parse(rest, false);
    }

    /** Go's url.ParseRequestURI: an absolute URL, or an absolute path; no fragment. */
    public static Url parseRequestUri(String s) throws Invalid {
        return parse(s, true);
    }

    private static Url parse(String s, boolean viaRequest) throws Invalid {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                throw new Invalid("invalid control character in URL");
            }
        }
        if (s.isEmpty() && viaRequest) {
            throw new Invalid("empty URL");
        }
        String scheme = "";
        String rest = s;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isLetter(c) && c < 0x80) {
                continue;
            }
            if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
                if (i == 0) {
                    break;
                }
                continue;
            }
            if (c == ':') {
                if (i == 0) {
                    throw new Invalid("missing protocol scheme");
                }
                scheme = s.substring(0, i).toLowerCase(Locale.ROOT);
                rest = s.substring(i + 1);
            }
            break;
        }
        int q = rest.indexOf('?');
        if (q >= 0) {
            rest = rest.substring(0, q);
        }
        if (!rest.startsWith("/")) {
            if (!scheme.isEmpty()) {
                return new Url(scheme, "", ""); // opaque, e.g. mailto:x
            }
            if (viaRequest) {
                throw new Invalid("invalid URI for request");
            }
            int slash = rest.indexOf('/');
            if ((slash < 0 ? rest : rest.substring(0, slash)).contains(":")) {
                throw new Invalid("first path segment in URL cannot contain colon");
            }
        }
        String host = "";
        String port = "";
        if ((!scheme.isEmpty() || !viaRequest) && rest.startsWith("//")) {
            String authority = rest.substring(2);
            int slash = authority.indexOf('/');
            String path = slash < 0 ? "" : authority.substring(slash);
            authority = slash < 0 ? authority : authority.substring(0, slash);
            int at = authority.lastIndexOf('@');
            if (at >= 0) {
                userinfo(authority.substring(0, at));
                authority = authority.substring(at + 1);
            }
            String[] hp = hostPort(authority);
            host = hp[0];
            port = hp[1];
            escapes(path, "path");
        } else {
            escapes(rest, "path");
        }
        return new Url(scheme, host, port);
    }

    private static void userinfo(String u) throws Invalid {
        for (int i = 0; i < u.length(); i++) {
            char c = u.charAt(i);
            if (!(Character.isLetterOrDigit(c) && c < 0x80) && "-._:~!$&'()*+,;=%@".indexOf(c) < 0) {
                throw new Invalid("invalid userinfo");
            }
        }
        escapes(u, "userinfo");
    }

    private static String[] hostPort(String authority) throws Invalid {
        String host = authority;
        String port = "";
        if (authority.startsWith("[")) {
            int close = authority.lastIndexOf(']');
            if (close < 0) {
                throw new Invalid("missing ']' in host");
            }
            String after = authority.substring(close + 1);
            if (!after.isEmpty()) {
                if (!after.startsWith(":")) {
                    throw new Invalid("invalid port \"" + after + "\" after host");
                }
                port = after.substring(1);
            }
            String literal = authority.substring(1, close);
            String zoneless = literal.contains("%25") ? literal.substring(0, literal.indexOf("%25")) : literal;
            if (!IpAddr.isAddress(zoneless) || !zoneless.contains(":")) {
                throw new Invalid("invalid IPv6 host \"" + literal + "\"");
            }
            host = literal;
        } else {
            int colon = authority.lastIndexOf(':');
            if (colon >= 0) {
                port = authority.substring(colon + 1);
                host = authority.substring(0, colon);
            }
            for (int i = 0; i < host.length(); i++) {
                char c = host.charAt(i);
                if (c < 0x80 && !Character.isLetterOrDigit(c) && "-._~!$&'()*+,;=:[]<>\"%".indexOf(c) < 0) {
                    throw new Invalid("invalid character \"" + c + "\" in host name");
                }
            }
            escapes(host, "host");
        }
        if (!port.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new Invalid("invalid port \":" + port + "\" after host");
        }
        return new String[] {host, port};
    }

    private static void escapes(String s, String part) throws Invalid {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == '%') {
                if (i + 2 >= s.length() || Character.digit(s.charAt(i + 1), 16) < 0
                        || Character.digit(s.charAt(i + 2), 16) < 0) {
                    throw new Invalid("invalid URL escape in " + part);
                }
                i += 2;
            }
        }
    }
}
