package io.meshpilot.lifecycle;

/** A component could not start; the message is the one line the operator sees. */
public final class ComponentStartException extends RuntimeException {
    private final Component component;

    public ComponentStartException(Component component, String message, Throwable cause) {
        super(component.label() + ": " + message, cause);
        this.component = component;
    }

    public Component component() {
        return component;
    }
}
