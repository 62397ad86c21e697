package io.meshpilot.admin;

import java.util.List;

/** Test access to the debug endpoint names the server derives from its resource class. */
public final class DebugResourceNames {
    private DebugResourceNames() {
    }

    /** What {@code /debug/list} answers: the endpoint names and istiod's query variants, sorted. */
    public static List<String> names() {
        return new DebugResource().list();
    }
}
