package io.meshpilot.config.validation;

import java.util.List;

/**
 * The outcome of validating one object: errors (the object is rejected) and warnings (it is
 * accepted, the user should know), kept apart as istiod does.
 */
public record ValidationResult(List<Issue> errors, List<Issue> warnings) {

    /** One finding: the field path ({@code spec.http[0].route[1].weight}) and why. */
    public record Issue(String path, String message) {
        @Override
        public String toString() {
            return path.isEmpty() ? message : path + ": " + message;
        }
    }

    public static final ValidationResult OK = new ValidationResult(List.of(), List.of());

    public ValidationResult {
        errors = List.copyOf(errors);
        warnings = List.copyOf(warnings);
    }

    public boolean valid() {
        return errors.isEmpty();
    }
}
