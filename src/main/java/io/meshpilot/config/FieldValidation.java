package io.meshpilot.config;

import java.util.Locale;

/**
 * What to do with fields the schema does not know, as the Kubernetes API server's
 * {@code fieldValidation} parameter: {@code Strict} rejects the object, {@code Warn} (the
 * default, and what istiod does with stored config) drops the fields with a warning each,
 * {@code Ignore} drops them silently. Wrong types and invalid values are errors in every mode.
 */
public enum FieldValidation {
    STRICT, WARN, IGNORE;

    /** The query parameter's value (case-insensitive); null or empty is {@link #WARN}. */
    public static FieldValidation parse(String value) {
        if (value == null || value.isEmpty()) {
            return WARN;
        }
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "strict" -> STRICT;
            case "warn" -> WARN;
            case "ignore" -> IGNORE;
            default -> throw new IllegalArgumentException(
                    "fieldValidation must be Strict, Warn or Ignore, got \"" + value + "\"");
        };
    }
}
