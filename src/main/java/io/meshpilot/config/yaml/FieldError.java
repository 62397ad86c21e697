package io.meshpilot.config.yaml;

/**
 * One problem in a document: where (field path and line/column, 1-based; 0 when unknown)
 * and why.
 */
public record FieldError(String path, int line, int column, String reason) {

    @Override
    public String toString() {
        String where = path.isEmpty() ? "" : path + ": ";
        return (line > 0 ? "line " + line + ": " : "") + where + reason;
    }
}
