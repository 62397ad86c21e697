package io.meshpilot.config;

/**
 * A config document that was rejected, or accepted with a warning, or a path of the config
 * tree that could not be read: where (source file or directory, 0-based document index in
 * it, line), what (kind/namespace/name as far as known), the field path and the reason.
 */
public record DocumentError(String source, int document, int line, String kind, String namespace, String name,
                            String path, String reason) {

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(source);
        if (line > 0) {
            sb.append(':').append(line);
        }
        boolean wholeFile = document == 0 && line == 0 && (kind == null || kind.isEmpty());
        if (!wholeFile) { // a path or file as a whole has no document to name
            sb.append(" (document ").append(document).append(")");
        }
        if (kind != null && !kind.isEmpty()) {
            sb.append(' ').append(kind).append('/').append(namespace).append('/').append(name);
        }
        sb.append(": ");
        if (path != null && !path.isEmpty()) {
            sb.append(path).append(": ");
        }
        return sb.append(reason).toString();
    }
}
