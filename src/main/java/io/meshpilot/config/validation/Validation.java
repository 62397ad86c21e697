package io.meshpilot.config.validation;

import java.util.ArrayList;
import java.util.List;

/**
 * Collects findings while a validator walks an object. Paths are JSON field paths rooted at
 * the object ({@code spec.hosts[0]}); {@link #at(String)} scopes a sub-walk.
 */
public final class Validation {
    private final List<ValidationResult.Issue> errors;
    private final List<ValidationResult.Issue> warnings;
    private final String prefix;

    public Validation() {
        this(new ArrayList<>(), new ArrayList<>(), "");
    }

    private Validation(List<ValidationResult.Issue> errors, List<ValidationResult.Issue> warnings, String prefix) {
        this.errors = errors;
        this.warnings = warnings;
        this.prefix = prefix;
    }

    /** A view whose paths are under {@code path} (a field name, or "[3]" for an index). */
    public Validation at(String path) {
        String p = prefix.isEmpty() ? path : path.startsWith("[") ? prefix + path : prefix + "." + path;
        return new Validation(errors, warnings, p);
    }

    public Validation at(String field, int index) {
        return at(field).at("[" + index + "]");
    }

    public void error(String message) {
        errors.add(new ValidationResult.Issue(prefix, message));
    }

    /** An error on a field below this view. */
    public void error(String field, String message) {
        at(field).error(message);
    }

    public void warn(String message) {
        warnings.add(new ValidationResult.Issue(prefix, message));
    }

    public void warn(String field, String message) {
        at(field).warn(message);
    }

    public boolean hasErrors() {
        return !errors.isEmpty();
    }

    public String path() {
        return prefix;
    }

    public ValidationResult result() {
        return new ValidationResult(errors, warnings);
    }
}
