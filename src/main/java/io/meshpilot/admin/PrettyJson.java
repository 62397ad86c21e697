package io.meshpilot.admin;

import jakarta.ws.rs.NameBinding;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks debug resources whose JSON answers honour istiod's {@code ?pretty} (its writeJSON
 * indents with four spaces); {@link PrettyJsonFilter} does the indenting.
 */
@NameBinding
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface PrettyJson {
}
