package io.meshpilot.config;

/**
 * A config document that was rejected: where (source file, 0-based document index in it,
 * line), what (kind/namespace/name as far as known), the field path and the reason.
 */
public record DocumentError(String source, int document, int line, String kind, String namespace, String name,
                            String path, String reason) {

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(source);
        if (line > 0) {
            sb.append(':').append(line);
        }
        sb.append(" (document ").append(document).append(")");
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
