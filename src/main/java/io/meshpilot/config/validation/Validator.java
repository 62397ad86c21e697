package io.meshpilot.config.validation;

import io.meshpilot.config.Config;

/** istiod's validation of one kind: reports into {@code v}, whose paths start at the object. */
@FunctionalInterface
public interface Validator {
    void validate(Config config, Validation v);

    /** Accepts everything (kinds istiod does not validate beyond their schema). */
    Validator NONE = (c, v) -> { };
}
