package io.meshpilot.networking.authz;

/**
 * A rule value that cannot become an Envoy matcher here: an HTTP-only attribute on a TCP
 * chain, a malformed IP or port, a key in the wrong form. An ALLOW rule holding one is left
 * out (it allows less); a DENY or AUDIT rule only loses that value (it denies more), as istiod.
 */
final class UnsupportedValue extends Exception {
    UnsupportedValue(String message) {
        super(message, null, false, false);
    }
}
