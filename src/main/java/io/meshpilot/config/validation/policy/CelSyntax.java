package io.meshpilot.config.validation.policy;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A syntax check of Common Expression Language text, as istiod does for access log filters
 * (it parses, it does not type-check): literals, identifiers and selections, calls, index,
 * list/map/message construction, unary/binary/ternary operators, and the argument shapes of
 * the standard macros. Names are not resolved, so {@code foo.bar == 1} passes.
 */
public final class CelSyntax {
    private static final Set<String> RESERVED = Set.of("as", "break", "const", "continue", "else", "for",
            "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while");
    private static final Set<String> COMPREHENSIONS = Set.of("all", "exists", "exists_one", "map", "filter");
    private static final int MAX_DEPTH = 250;
    private static final int MAX_LENGTH = 100_000;
    private static final BigInteger INT_LIMIT = BigInteger.ONE.shiftLeft(63);
    private static final BigInteger UINT_LIMIT = BigInteger.ONE.shiftLeft(64);

    private enum T {
        IDENT, NUMBER, STRING, OP, EOF
    }

    private record Token(T type, String text, int pos) {
        boolean is(String op) {
            return type == T.OP && text.equals(op);
        }
    }

    /** What an expression is, as far as macros care. */
    private enum Shape {
        IDENT, SELECT, OTHER
    }

    private static final class Error extends Exception {
        Error(String message, int pos) {
            super(message + " at position " + (pos + 1), null, false, false);
        }
    }

    private final String src;
    private final List<Token> tokens = new ArrayList<>();
    private int at;
    private int depth;

    private CelSyntax(String src) {
        this.src = src;
    }

    /** Why {@code expression} is not a CEL expression, or null. */
    public static String check(String expression) {
        if (expression.isBlank()) {
            return "expression must not be empty";
        }
        if (expression.codePointCount(0, expression.length()) > MAX_LENGTH) {
            return "expression is longer than " + MAX_LENGTH + " characters";
        }
        CelSyntax p = new CelSyntax(expression);
        try {
            p.lex();
            p.expr();
            Token t = p.peek();
            if (t.type() != T.EOF) {
                throw new Error("unexpected \"" + t.text() + "\"", t.pos());
            }
            return null;
        } catch (Error e) {
            return "invalid CEL expression: " + e.getMessage();
        }
    }

    // ---- lexer ----

    private void lex() throws Error {
        int i = 0;
        int n = src.length();
        while (i < n) {
            char c = src.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
                i++;
            } else if (c == '/' && i + 1 < n && src.charAt(i + 1) == '/') {
                while (i < n && src.charAt(i) != '\n') {
                    i++;
                }
            } else if (isIdentStart(c)) {
                int s = i;
                while (i < n && isIdentPart(src.charAt(i))) {
                    i++;
                }
                String word = src.substring(s, i);
                if (i < n && (src.charAt(i) == '"' || src.charAt(i) == '\'') && isStringPrefix(word)) {
                    i = string(i, word.toLowerCase().contains("r"), word.toLowerCase().contains("b"));
                    tokens.add(new Token(T.STRING, src.substring(s, i), s));
                } else {
                    tokens.add(new Token(T.IDENT, word, s));
                }
            } else if (isDigit(c) || (c == '.' && i + 1 < n && isDigit(src.charAt(i + 1)))) {
                int s = i;
                i = number(i);
                tokens.add(new Token(T.NUMBER, src.substring(s, i), s));
            } else if (c == '"' || c == '\'') {
                int s = i;
                i = string(i, false, false);
                tokens.add(new Token(T.STRING, src.substring(s, i), s));
            } else {
                String two = i + 1 < n ? src.substring(i, i + 2) : "";
                if (Set.of("==", "!=", "<=", ">=", "&&", "||").contains(two)) {
                    tokens.add(new Token(T.OP, two, i));
                    i += 2;
                } else if ("<>!+-*/%?:.,()[]{}".indexOf(c) >= 0) {
                    tokens.add(new Token(T.OP, String.valueOf(c), i));
                    i++;
                } else {
                    throw new Error("unexpected character '" + c + "'", i);
                }
            }
        }
        tokens.add(new Token(T.EOF, "end of expression", n));
    }

    private static boolean isStringPrefix(String w) {
        String l = w.toLowerCase();
        return l.equals("r") || l.equals("b") || l.equals("rb") || l.equals("br");
    }

    private int number(int i) throws Error {
        int n = src.length();
        int s = i;
        if (src.startsWith("0x", i) || src.startsWith("0X", i)) {
            i += 2;
            int d = i;
            while (i < n && Character.digit(src.charAt(i), 16) >= 0) {
                i++;
            }
            if (i == d) {
                throw new Error("invalid hex literal", s);
            }
            boolean unsigned = i < n && (src.charAt(i) == 'u' || src.charAt(i) == 'U');
            range(new BigInteger(src.substring(d, i), 16), unsigned, s);
            return unsigned ? i + 1 : i;
        }
        while (i < n && isDigit(src.charAt(i))) {
            i++;
        }
        boolean isFloat = false;
        if (i + 1 < n && src.charAt(i) == '.' && isDigit(src.charAt(i + 1))) {
            isFloat = true;
            i++;
            while (i < n && isDigit(src.charAt(i))) {
                i++;
            }
        }
        if (i < n && (src.charAt(i) == 'e' || src.charAt(i) == 'E')) {
            int e = i + 1;
            if (e < n && (src.charAt(e) == '+' || src.charAt(e) == '-')) {
                e++;
            }
            if (e < n && isDigit(src.charAt(e))) {
                isFloat = true;
                i = e;
                while (i < n && isDigit(src.charAt(i))) {
                    i++;
                }
            }
        }
        if (isFloat) {
            return i;
        }
        boolean unsigned = i < n && (src.charAt(i) == 'u' || src.charAt(i) == 'U');
        range(new BigInteger(src.substring(s, i)), unsigned, s);
        return unsigned ? i + 1 : i;
    }

    private static void range(BigInteger v, boolean unsigned, int pos) throws Error {
        // 2^63 itself is let through: it is only valid negated, and the sign is a separate token
        if (v.compareTo(unsigned ? UINT_LIMIT.subtract(BigInteger.ONE) : INT_LIMIT) > 0) {
            throw new Error("integer literal out of range", pos);
        }
    }

    /** Reads a quoted literal starting at the quote; returns the index after it. */
    private int string(int i, boolean raw, boolean bytes) throws Error {
        int n = src.length();
        int start = i;
        char q = src.charAt(i);
        boolean triple = src.startsWith("" + q + q + q, i);
        i += triple ? 3 : 1;
        while (true) {
            if (i >= n) {
                throw new Error("unterminated string literal", start);
            }
            char c = src.charAt(i);
            if (triple ? src.startsWith("" + q + q + q, i) : c == q) {
                return i + (triple ? 3 : 1);
            }
            if (!triple && (c == '\n' || c == '\r')) {
                throw new Error("line break in a single-quoted string literal", start);
            }
            if (c == '\\' && !raw) {
                i = escape(i, bytes);
            } else if (c == '\\' && i + 1 < n) {
                i += 2; // raw: the backslash is literal, but it still protects the quote after it
            } else {
                i++;
            }
        }
    }

    private int escape(int i, boolean bytes) throws Error {
        int n = src.length();
        if (i + 1 >= n) {
            throw new Error("unterminated escape sequence", i);
        }
        char e = src.charAt(i + 1);
        if ("abfnrtv\\'\"`?".indexOf(e) >= 0) {
            return i + 2;
        }
        int digits;
        int radix = 16;
        switch (e) {
            case 'x', 'X' -> digits = 2;
            case 'u' -> digits = 4;
            case 'U' -> digits = 8;
            case '0', '1', '2', '3' -> {
                digits = 3;
                radix = 8;
            }
            default -> throw new Error("invalid escape sequence \"\\" + e + "\"", i);
        }
        if (bytes && (e == 'u' || e == 'U')) {
            throw new Error("unicode escapes are not allowed in bytes literals", i);
        }
        int from = radix == 8 ? i + 1 : i + 2;
        if (from + digits > n) {
            throw new Error("incomplete escape sequence", i);
        }
        for (int k = from; k < from + digits; k++) {
            if (Character.digit(src.charAt(k), radix) < 0) {
                throw new Error("invalid escape sequence", i);
            }
        }
        if (e == 'u' || e == 'U') {
            long cp = Long.parseLong(src.substring(from, from + digits), 16);
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                throw new Error("invalid unicode code point in escape", i);
            }
        }
        return from + digits;
    }

    private static boolean isIdentStart(char c) {
        return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    private static boolean isIdentPart(char c) {
        return isIdentStart(c) || isDigit(c);
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    // ---- parser (CEL grammar, precedence climbing by hand) ----

    private Token peek() {
        return tokens.get(at);
    }

    private Token next() {
        return tokens.get(at++);
    }

    private boolean accept(String op) {
        if (peek().is(op)) {
            at++;
            return true;
        }
        return false;
    }

    private void expect(String op) throws Error {
        Token t = next();
        if (!t.is(op)) {
            throw new Error("expected \"" + op + "\" but found \"" + t.text() + "\"", t.pos());
        }
    }

    private Shape expr() throws Error {
        if (++depth > MAX_DEPTH) {
            throw new Error("expression nested too deeply", peek().pos());
        }
        try {
            Shape s = or();
            if (accept("?")) {
                or();
                expect(":");
                expr();
                return Shape.OTHER;
            }
            return s;
        } finally {
            depth--;
        }
    }

    private Shape or() throws Error {
        Shape s = and();
        while (accept("||")) {
            and();
            s = Shape.OTHER;
        }
        return s;
    }

    private Shape and() throws Error {
        Shape s = relation();
        while (accept("&&")) {
            relation();
            s = Shape.OTHER;
        }
        return s;
    }

    private Shape relation() throws Error {
        Shape s = addition();
        while (peek().is("<") || peek().is("<=") || peek().is(">") || peek().is(">=") || peek().is("==")
                || peek().is("!=") || (peek().type() == T.IDENT && peek().text().equals("in"))) {
            next();
            addition();
            s = Shape.OTHER;
        }
        return s;
    }

    private Shape addition() throws Error {
        Shape s = multiplication();
        while (peek().is("+") || peek().is("-")) {
            next();
            multiplication();
            s = Shape.OTHER;
        }
        return s;
    }

    private Shape multiplication() throws Error {
        Shape s = unary();
        while (peek().is("*") || peek().is("/") || peek().is("%")) {
            next();
            unary();
            s = Shape.OTHER;
        }
        return s;
    }

    private Shape unary() throws Error {
        if (peek().is("!") || peek().is("-")) {
            while (peek().is("!") || peek().is("-")) {
                next();
            }
            member();
            return Shape.OTHER;
        }
        return member();
    }

    private Shape member() throws Error {
        Shape s = primary();
        boolean qualifiedName = s == Shape.IDENT;
        while (true) {
            if (accept(".")) {
                Token name = next();
                if (name.type() != T.IDENT || name.text().equals("in")) {
                    throw new Error("expected a field name after \".\" but found \"" + name.text() + "\"", name.pos());
                }
                if (peek().is("(")) {
                    next();
                    List<Shape> args = args(")");
                    macroArgs(name, args);
                    s = Shape.OTHER;
                    qualifiedName = false;
                } else {
                    s = Shape.SELECT;
                }
            } else if (accept("[")) {
                expr();
                expect("]");
                s = Shape.OTHER;
                qualifiedName = false;
            } else if (peek().is("{") && qualifiedName) {
                next();
                fieldInits();
                s = Shape.OTHER;
                qualifiedName = false;
            } else {
                return s;
            }
        }
    }

    private Shape primary() throws Error {
        Token t = next();
        if (t.is(".")) {
            Token name = next();
            if (name.type() != T.IDENT) {
                throw new Error("expected an identifier after leading \".\"", name.pos());
            }
            t = name;
        }
        switch (t.type()) {
            case NUMBER, STRING -> {
                return Shape.OTHER;
            }
            case IDENT -> {
                if (t.text().equals("in")) {
                    throw new Error("unexpected \"in\"", t.pos());
                }
                if (RESERVED.contains(t.text())) {
                    throw new Error("reserved word \"" + t.text() + "\" cannot be used as an identifier", t.pos());
                }
                if (Set.of("true", "false", "null").contains(t.text())) {
                    return Shape.OTHER;
                }
                if (accept("(")) {
                    List<Shape> args = args(")");
                    if (t.text().equals("has") && (args.size() != 1 || args.get(0) != Shape.SELECT)) {
                        throw new Error("has() takes one field selection, such as has(a.b)", t.pos());
                    }
                    return Shape.OTHER;
                }
                return Shape.IDENT;
            }
            case OP -> {
                switch (t.text()) {
                    case "(" -> {
                        expr();
                        expect(")");
                        return Shape.OTHER;
                    }
                    case "[" -> {
                        args("]");
                        return Shape.OTHER;
                    }
                    case "{" -> {
                        mapInits();
                        return Shape.OTHER;
                    }
                    default -> throw new Error("unexpected \"" + t.text() + "\"", t.pos());
                }
            }
            default -> throw new Error("unexpected end of expression", t.pos());
        }
    }

    /** A comma-separated list closed by {@code close}; a trailing comma is allowed. */
    private List<Shape> args(String close) throws Error {
        List<Shape> shapes = new ArrayList<>();
        if (accept(close)) {
            return shapes;
        }
        while (true) {
            shapes.add(expr());
            if (accept(close)) {
                return shapes;
            }
            expect(",");
            if (accept(close)) {
                return shapes;
            }
        }
    }

    private void mapInits() throws Error {
        if (accept("}")) {
            return;
        }
        while (true) {
            expr();
            expect(":");
            expr();
            if (accept("}")) {
                return;
            }
            expect(",");
            if (accept("}")) {
                return;
            }
        }
    }

    private void fieldInits() throws Error {
        if (accept("}")) {
            return;
        }
        while (true) {
            Token f = next();
            if (f.type() != T.IDENT) {
                throw new Error("expected a field name but found \"" + f.text() + "\"", f.pos());
            }
            expect(":");
            expr();
            if (accept("}")) {
                return;
            }
            expect(",");
            if (accept("}")) {
                return;
            }
        }
    }

    private static void macroArgs(Token name, List<Shape> args) throws Error {
        boolean macro = COMPREHENSIONS.contains(name.text())
                && (args.size() == 2 || (args.size() == 3 && name.text().equals("map")));
        if (macro && args.get(0) != Shape.IDENT) {
            throw new Error(name.text() + "() needs a simple variable name as its first argument", name.pos());
        }
    }
}
