package io.meshpilot.status;

import com.google.gson.JsonObject;
import io.meshpilot.config.validation.ValidationResult;
import java.util.Locale;

/**
 * One entry of an Istio object's {@code status.validationMessages} (istio.io/api
 * analysis.v1alpha1.AnalysisMessageBase as istiod writes it: type code and name, level,
 * documentation URL), plus the message text so the finding can be read without the analyzer.
 *
 * @param code    the analysis message code, e.g. IST0133
 * @param name    the message type's name, e.g. SchemaWarning
 * @param level   ERROR, WARNING or INFO
 * @param message what was found, with the field path
 */
public record ValidationMessage(String code, String name, String level, String message) {
    /** istiod's analysis docs, linked from the status as its status controller links them. */
    static final String DOCS = "https://istio.io/latest/docs/reference/config/analysis/";

    /** A validation warning: istio's schema analyzer reports each as IST0133 SchemaWarning. */
    public static ValidationMessage schemaWarning(ValidationResult.Issue warning) {
        return new ValidationMessage("IST0133", "SchemaWarning", "WARNING", "Schema validation warning: " + warning);
    }

    JsonObject toJson() {
        JsonObject type = new JsonObject();
        type.addProperty("code", code);
        type.addProperty("name", name);
        JsonObject o = new JsonObject();
        o.add("type", type);
        o.addProperty("level", level);
        o.addProperty("documentationUrl", DOCS + code.toLowerCase(Locale.ROOT) + "/?ref=status-controller");
        o.addProperty("message", message);
        return o;
    }
}
