package io.meshpilot.config.kube.gateway.convert;

/**
 * One converted piece of a route with the error found converting it: no value is a hard error
 * (the piece is dropped), a value with an error is kept and the error reported.
 */
record Converted<T>(T value, ConfigError error) {
    static <T> Converted<T> ok(T value) {
        return new Converted<>(value, null);
    }

    static <T> Converted<T> failed(ConfigError error) {
        return new Converted<>(null, error);
    }

    boolean hardError() {
        return value == null;
    }
}
