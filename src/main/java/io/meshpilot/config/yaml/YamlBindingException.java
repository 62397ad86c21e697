package io.meshpilot.config.yaml;

import java.util.List;

/** A document could not be read or bound to its message type; lists every problem found. */
public final class YamlBindingException extends Exception {
    private final String source;
    private final List<FieldError> errors;

    public YamlBindingException(String source, List<FieldError> errors) {
        super(source + ": " + String.join("; ", errors.stream().map(FieldError::toString).toList()));
        this.source = source;
        this.errors = List.copyOf(errors);
    }

    public String source() {
        return source;
    }

    public List<FieldError> errors() {
        return errors;
    }

    /** The first error: what a one-line report names. */
    public FieldError first() {
        return errors.get(0);
    }
}
