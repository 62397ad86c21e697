package io.meshpilot.config.yaml;

import java.util.Locale;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Finds the line of a field path ({@code defaultConfig.discoveryAddress},
 * {@code servers[0].port}) in a YAML node tree, so semantic validation errors can point at
 * the line the user wrote. Keys match by JSON name or proto name.
 */
public final class YamlPaths {
    private YamlPaths() {
    }

    /** The 1-based line of the deepest node on the path that exists; 0 without a tree. */
    public static int line(Node root, String path) {
        Node node = root;
        Node best = root;
        if (path == null || path.isEmpty() || root == null) {
            return ProtoYamlBinder.line(root);
        }
        for (String part : path.split("\\.")) {
            String key = part;
            int bracket = part.indexOf('[');
            String index = null;
            if (bracket >= 0) {
                key = part.substring(0, bracket);
                index = part.substring(bracket + 1, part.length() - 1);
            }
            Node next = key.isEmpty() ? node : child(node, key);
            if (next == null) {
                break;
            }
            node = next;
            best = next;
            if (index != null) {
                next = element(node, index);
                if (next == null) {
                    break;
                }
                node = next;
                best = next;
            }
        }
        return ProtoYamlBinder.line(best);
    }

    private static Node child(Node node, String key) {
        if (node instanceof MappingNode map) {
            String snake = key.replaceAll("([A-Z])", "_$1").toLowerCase(Locale.ROOT);
            for (NodeTuple t : map.getValue()) {
                if (t.getKeyNode() instanceof ScalarNode k && (k.getValue().equals(key) || k.getValue().equals(snake))) {
                    return t.getValueNode();
                }
            }
        }
        return null;
    }

    private static Node element(Node node, String index) {
        if (node instanceof SequenceNode seq) {
            try {
                int i = Integer.parseInt(index);
                return i < seq.getValue().size() ? seq.getValue().get(i) : null;
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return child(node, index); // map entry: path[key]
    }
}
