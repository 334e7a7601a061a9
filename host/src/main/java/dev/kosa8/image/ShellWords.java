package dev.kosa8.image;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Splits the arguments of a Dockerfile instruction into words and
 * substitutes variables, as Docker's own word lexer does for {@code ENV},
 * {@code ARG}, {@code LABEL}, {@code COPY}/{@code ADD}, {@code WORKDIR},
 * {@code USER} and {@code FROM}: words are separated by blanks; single quotes
 * keep everything literal; in double quotes and outside, a backslash escapes
 * the next character and {@code $NAME}, {@code ${NAME}}, {@code ${NAME:-word}},
 * {@code ${NAME-word}}, {@code ${NAME:+word}} and {@code ${NAME+word}} are
 * replaced. An unset variable is empty. {@code RUN}, {@code CMD} and
 * {@code ENTRYPOINT} are never substituted here: their shell does it.
 */
final class ShellWords {
    private final String text;
    private final Function<String, String> vars;
    private int pos;

    private ShellWords(String text, Function<String, String> vars) {
        this.text = text;
        this.vars = vars;
    }

    /** The words of {@code text}; {@code vars} gives a variable's value, null when unset. */
    static List<String> split(String text, Function<String, String> vars) {
        ShellWords w = new ShellWords(text, vars);
        List<String> words = new ArrayList<>();
        while (true) {
            w.skipBlanks();
            if (w.pos >= text.length()) {
                return words;
            }
            words.add(w.word());
        }
    }

    /** {@code text} as one word: quotes removed, variables substituted, blanks kept. */
    static String substitute(String text, Function<String, String> vars) {
        ShellWords w = new ShellWords(text, vars);
        StringBuilder out = new StringBuilder();
        while (w.pos < text.length()) {
            char c = text.charAt(w.pos);
            if (Character.isWhitespace(c)) {
                out.append(c);
                w.pos++;
            } else {
                out.append(w.word());
            }
        }
        return out.toString();
    }

    private void skipBlanks() {
        while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
            pos++;
        }
    }

    private String word() {
        StringBuilder out = new StringBuilder();
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (Character.isWhitespace(c)) {
                break;
            }
            if (c == '\'') {
                int end = text.indexOf('\'', pos + 1);
                if (end < 0) {
                    throw new IllegalArgumentException("a single quote is not closed");
                }
                out.append(text, pos + 1, end);
                pos = end + 1;
            } else if (c == '"') {
                pos++;
                while (true) {
                    if (pos >= text.length()) {
                        throw new IllegalArgumentException("a double quote is not closed");
                    }
                    char d = text.charAt(pos);
                    if (d == '"') {
                        pos++;
                        break;
                    }
                    if (d == '\\' && pos + 1 < text.length() && "\"\\$".indexOf(text.charAt(pos + 1)) >= 0) {
                        out.append(text.charAt(pos + 1));
                        pos += 2;
                    } else if (d == '$') {
                        out.append(variable());
                    } else {
                        out.append(d);
                        pos++;
                    }
                }
            } else if (c == '\\' && pos + 1 < text.length()) {
                out.append(text.charAt(pos + 1));
                pos += 2;
            } else if (c == '$') {
                out.append(variable());
            } else {
                out.append(c);
                pos++;
            }
        }
        return out.toString();
    }

    /** At a '$': the value it stands for (or the '$' itself when no name follows). */
    private String variable() {
        pos++; // the '$'
        if (pos >= text.length()) {
            return "$";
        }
        char c = text.charAt(pos);
        if (c == '{') {
            int close = matchingBrace(pos);
            String inner = text.substring(pos + 1, close);
            pos = close + 1;
            int i = 0;
            while (i < inner.length() && isNameChar(inner.charAt(i), i)) {
                i++;
            }
            String name = inner.substring(0, i);
            if (name.isEmpty()) {
                throw new IllegalArgumentException("'${" + inner + "}' names no variable");
            }
            String op = inner.substring(i);
            String value = vars.apply(name);
            if (op.isEmpty()) {
                return value == null ? "" : value;
            }
            String modifier;
            String word;
            if (op.startsWith(":-") || op.startsWith(":+")) {
                modifier = op.substring(0, 2);
                word = op.substring(2);
            } else if (op.startsWith("-") || op.startsWith("+")) {
                modifier = op.substring(0, 1);
                word = op.substring(1);
            } else {
                throw new IllegalArgumentException("'${" + inner + "}': only ${NAME}, ${NAME:-word}, ${NAME-word},"
                        + " ${NAME:+word} and ${NAME+word} are supported");
            }
            String expanded = substitute(word, vars);
            return switch (modifier) {
                case ":-" -> value == null || value.isEmpty() ? expanded : value;
                case "-" -> value == null ? expanded : value;
                case ":+" -> value == null || value.isEmpty() ? "" : expanded;
                default -> value == null ? "" : expanded;
            };
        }
        int start = pos;
        while (pos < text.length() && isNameChar(text.charAt(pos), pos - start)) {
            pos++;
        }
        if (pos == start) {
            return "$";
        }
        String value = vars.apply(text.substring(start, pos));
        return value == null ? "" : value;
    }

    private int matchingBrace(int open) {
        int depth = 0;
        for (int i = open; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '{') {
                depth++;
            } else if (c == '}' && --depth == 0) {
                return i;
            }
        }
        throw new IllegalArgumentException("'${' is not closed");
    }

    private static boolean isNameChar(char c, int index) {
        return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || index > 0 && c >= '0' && c <= '9';
    }
}
