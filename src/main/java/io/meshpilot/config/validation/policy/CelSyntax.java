package io.meshpilot.config.validation.policy;

import dev.cel.common.CelIssue;
import dev.cel.common.CelOptions;
import dev.cel.common.CelSourceLocation;
import dev.cel.common.CelValidationResult;
import dev.cel.parser.CelParser;
import dev.cel.parser.CelParserFactory;
import dev.cel.parser.CelStandardMacro;
import java.util.stream.Collectors;

/**
 * The syntax check istiod applies to a Telemetry access-log filter: it parses the expression with
 * the official CEL parser in a default environment (standard macros, default size and nesting
 * limits) and does not type-check, so names are not resolved and {@code foo.bar == 1} passes.
 */
public final class CelSyntax {
    /** Same limits as cel-go's {@code cel.NewEnv()}: 100,000 code points, nesting depth 250. */
    private static final CelParser PARSER = CelParserFactory.standardCelParserBuilder()
            .setOptions(CelOptions.DEFAULT)
            .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
            .build();

    private CelSyntax() {
    }

    /** Why {@code expression} is not a CEL expression (each error with line:column), or null. */
    public static String check(String expression) {
        if (expression.isBlank()) {
            // the parser rejects this too, but as "mismatched input '<EOF>'", which hides the reason
            return "must be a valid CEL expression, expression must not be empty";
        }
        CelValidationResult parsed = PARSER.parse(expression);
        if (!parsed.hasError()) {
            return null;
        }
        return "must be a valid CEL expression, " + parsed.getErrors().stream()
                .map(CelSyntax::describe)
                .collect(Collectors.joining("; "));
    }

    private static String describe(CelIssue issue) {
        CelSourceLocation at = issue.getSourceLocation();
        if (at.equals(CelSourceLocation.NONE)) {
            return issue.getMessage();
        }
        // CEL reports a 0-based column; editors and the other validators count from 1.
        return issue.getMessage() + " at " + at.getLine() + ":" + (at.getColumn() + 1);
    }
}
