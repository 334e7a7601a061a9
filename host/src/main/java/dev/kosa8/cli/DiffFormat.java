package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;

/** How {@code kosa8 diff} prints the daemon's changes: in full, or one line a path ({@code --stat}). */
final class DiffFormat {
    private DiffFormat() {
    }

    /** Each change: a line saying what changed, then its unified diff when it is text. */
    static String full(JsonNode changes) {
        StringBuilder out = new StringBuilder();
        for (JsonNode c : changes) {
            out.append(String.format("%-9s %s%s%n", c.path("change").asText(), c.path("path").asText(), what(c)));
            String text = c.path("text").asText("");
            if (!text.isEmpty()) {
                out.append(text);
            }
        }
        return out.toString();
    }

    /** One line a path, git's --stat shape, and a total. */
    static String stat(JsonNode changes) {
        int width = 0;
        for (JsonNode c : changes) {
            width = Math.max(width, c.path("path").asText().length());
        }
        width = Math.min(width, 60);
        StringBuilder out = new StringBuilder();
        long added = 0;
        long removed = 0;
        for (JsonNode c : changes) {
            String detail;
            if (c.path("added").asInt(-1) >= 0) {
                added += c.path("added").asInt();
                removed += c.path("removed").asInt();
                detail = "+" + c.path("added").asInt() + " -" + c.path("removed").asInt();
            } else {
                detail = c.path("change").asText() + what(c);
            }
            out.append(String.format(" %-" + width + "s | %s%n", c.path("path").asText(), detail));
        }
        out.append(String.format(" %d path%s changed, %d line%s added, %d removed%n", changes.size(),
                changes.size() == 1 ? "" : "s", added, added == 1 ? "" : "s", removed));
        return out.toString();
    }

    /** What the line alone cannot say: a kind that is not a file, a mode, a symlink's target, a binary's size. */
    private static String what(JsonNode c) {
        JsonNode b = c.path("before");
        JsonNode a = c.path("after");
        return switch (c.path("change").asText()) {
            case "mode" -> "  " + octal(b) + " -> " + octal(a);
            case "symlink" -> "  -> " + b.path("target").asText() + " => -> " + a.path("target").asText();
            case "type" -> "  " + b.path("kind").asText() + " -> " + a.path("kind").asText();
            default -> {
                JsonNode side = a.isObject() ? a : b;
                String kind = side.path("kind").asText();
                if (!kind.equals("file")) {
                    yield "  (" + kind + (kind.equals("symlink") ? " -> " + side.path("target").asText() : "") + ")";
                }
                String modes = b.isObject() && a.isObject() && b.path("mode").asInt() != a.path("mode").asInt()
                        ? ", mode " + octal(b) + " -> " + octal(a) : "";
                yield c.path("text").isTextual() ? modes.isEmpty() ? "" : "  (" + modes.substring(2) + ")"
                        : "  (binary or larger than 1 MiB, " + Sizes.human(side.path("size").asLong()) + modes + ")";
            }
        };
    }

    private static String octal(JsonNode side) {
        return String.format("%04o", side.path("mode").asInt());
    }
}
