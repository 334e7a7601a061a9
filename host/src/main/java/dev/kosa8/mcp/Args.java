package dev.kosa8.mcp;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One tool call's arguments, read and checked: each getter names the argument in its error, says what it must be,
 * and holds it to a bound, so a client's mistake is a {@link ToolError} an agent can act on rather than a daemon
 * error or a crash. Arguments the tool does not know are refused too: a misspelt name is not silently ignored.
 */
public final class Args {
    /** The longest text argument other than file content and stdin. */
    public static final int MAX_TEXT = 4096;
    /** The most items a list argument (argv, allow rules, secrets) may have. */
    public static final int MAX_ITEMS = 256;
    /** The most bytes of file content or stdin one call carries, after decoding. */
    public static final int MAX_CONTENT = 4 * 1024 * 1024;
    /** The longest guest path, as Linux's PATH_MAX. */
    public static final int MAX_PATH = 4096;

    private static final Pattern SANDBOX_ID = Pattern.compile("[0-9a-f]{1,12}");
    private static final Pattern PROCESS_ID = Pattern.compile("p[0-9]{1,18}");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,255}");

    private final String tool;
    private final Map<String, Object> values;

    public Args(String tool, Map<String, Object> values, Set<String> known) {
        this.tool = tool;
        this.values = values == null ? Map.of() : values;
        for (String k : this.values.keySet()) {
            if (!known.contains(k)) {
                throw new ToolError(tool + " has no argument '" + k + "'", "its arguments are "
                        + String.join(", ", known.stream().sorted().toList()));
            }
        }
    }

    private ToolError wrong(String name, String what) {
        return new ToolError(tool + ": '" + name + "' " + what, "");
    }

    public boolean has(String name) {
        return values.get(name) != null;
    }

    /** A string argument, required: present, not blank, at most {@code max} characters. */
    public String text(String name, int max) {
        String s = optionalText(name, max, null);
        if (s == null || s.isBlank()) {
            throw new ToolError(tool + " needs '" + name + "'", "");
        }
        return s;
    }

    /** A string argument or {@code dflt} when absent; at most {@code max} characters, no NUL. */
    public String optionalText(String name, int max, String dflt) {
        Object v = values.get(name);
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof String s)) {
            throw wrong(name, "must be a string");
        }
        if (s.length() > max) {
            throw new ToolError(tool + ": '" + name + "' is " + s.length() + " characters, more than the "
                    + max + " it may have", "send a shorter value");
        }
        if (s.indexOf('\0') >= 0) {
            throw wrong(name, "must not contain a NUL character");
        }
        return s;
    }

    /** A whole number in {@code [min, max]}, or {@code dflt} when absent. */
    public long number(String name, long min, long max, long dflt) {
        Object v = values.get(name);
        if (v == null) {
            return dflt;
        }
        long n;
        if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
            n = ((Number) v).longValue();
        } else if (v instanceof Number d && d.doubleValue() == Math.rint(d.doubleValue())
                && Math.abs(d.doubleValue()) < 9e15) {
            n = (long) d.doubleValue();
        } else {
            throw wrong(name, "must be a whole number");
        }
        if (n < min || n > max) {
            throw new ToolError(tool + ": '" + name + "' is " + n + ", outside " + min + ".." + max,
                    "send a value from " + min + " to " + max);
        }
        return n;
    }

    public boolean flag(String name, boolean dflt) {
        Object v = values.get(name);
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof Boolean b)) {
            throw wrong(name, "must be true or false");
        }
        return b;
    }

    /** A list of strings, each at most {@link #MAX_TEXT} characters; empty when absent. */
    public List<String> texts(String name) {
        Object v = values.get(name);
        if (v == null) {
            return List.of();
        }
        if (!(v instanceof List<?> list)) {
            throw wrong(name, "must be an array of strings");
        }
        if (list.size() > MAX_ITEMS) {
            throw new ToolError(tool + ": '" + name + "' has " + list.size() + " items, more than the " + MAX_ITEMS
                    + " it may have", "");
        }
        List<String> out = new ArrayList<>();
        for (Object o : list) {
            if (!(o instanceof String s) || s.length() > MAX_TEXT || s.indexOf('\0') >= 0) {
                throw wrong(name, "must be an array of strings of at most " + MAX_TEXT + " characters, without NUL");
            }
            out.add(s);
        }
        return out;
    }

    /** An object of environment variables, NAME to value; empty when absent. */
    public Map<String, String> env(String name) {
        Object v = values.get(name);
        if (v == null) {
            return Map.of();
        }
        if (!(v instanceof Map<?, ?> m)) {
            throw wrong(name, "must be an object of NAME: value");
        }
        if (m.size() > MAX_ITEMS) {
            throw new ToolError(tool + ": '" + name + "' has more than " + MAX_ITEMS + " variables", "");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (!(e.getKey() instanceof String k) || !ENV_NAME.matcher(k).matches()) {
                throw wrong(name, "has a variable name '" + e.getKey() + "' that is not a name like PATH or MY_VAR");
            }
            if (!(e.getValue() instanceof String s) || s.length() > MAX_TEXT || s.indexOf('\0') >= 0) {
                throw wrong(name, "has a value for " + k + " that is not a string of at most " + MAX_TEXT
                        + " characters without NUL");
            }
            out.put(k, s);
        }
        return out;
    }

    /** A sandbox id (or unique prefix) as {@code kosa8 ls} shows it. */
    public String sandbox() {
        String id = text("sandbox", 64);
        if (!SANDBOX_ID.matcher(id).matches()) {
            throw new ToolError(tool + ": '" + id + "' is not a sandbox id",
                    "ids are up to 12 hex characters; list_sandboxes lists them");
        }
        return id;
    }

    /** A process id, as start_process answers it ({@code p3}). */
    public String process() {
        String id = text("process", 64);
        if (!PROCESS_ID.matcher(id).matches()) {
            throw new ToolError(tool + ": '" + id + "' is not a process id",
                    "process ids look like p3; start_process answers one, list_processes lists them");
        }
        return id;
    }

    /**
     * A path in the guest: absolute, without {@code .} or {@code ..} segments (a path that would climb out of where
     * it names is refused, not resolved), no NUL, at most {@link #MAX_PATH} bytes.
     */
    public String guestPath(String name) {
        String p = text(name, MAX_PATH);
        return checkGuestPath(tool, name, p);
    }

    static String checkGuestPath(String tool, String name, String p) {
        if (p.getBytes(StandardCharsets.UTF_8).length > MAX_PATH) {
            throw new ToolError(tool + ": '" + name + "' is longer than " + MAX_PATH + " bytes", "");
        }
        if (!p.startsWith("/")) {
            throw new ToolError(tool + ": '" + name + "' must be an absolute path in the sandbox, not '" + p + "'",
                    "start it with /, like /root/notes.txt or /workspace/src/main.py");
        }
        for (String seg : p.split("/", -1)) {
            if (seg.equals("..") || seg.equals(".")) {
                throw new ToolError(tool + ": '" + name + "' has a '" + seg + "' segment: '" + p
                        + "' escapes the path it names", "send the path as it is, without . or .. segments");
            }
        }
        return p;
    }

    /**
     * Content as text ({@code encoding} utf-8, the default) or base64 ({@code encoding} base64): at most
     * {@link #MAX_CONTENT} bytes once decoded; empty when absent and not {@code required}.
     */
    public byte[] content(String name, boolean required) {
        Object v = values.get(name);
        if (v == null) {
            if (required) {
                throw new ToolError(tool + " needs '" + name + "'", "");
            }
            return new byte[0];
        }
        if (!(v instanceof String s)) {
            throw wrong(name, "must be a string");
        }
        String encoding = encoding();
        // a UTF-8 string is at least its length in bytes, base64 three quarters of it: refuse before decoding
        long least = encoding.equals("base64") ? (s.length() / 4L) * 3 - 2 : s.length();
        if (least > MAX_CONTENT) {
            throw tooLarge(name, least);
        }
        byte[] bytes;
        if (encoding.equals("base64")) {
            try {
                // line breaks and spaces, as base64 tools wrap it, are skipped; any other stray character is an error
                bytes = Base64.getDecoder().decode(s.replaceAll("\\s+", ""));
            } catch (IllegalArgumentException e) {
                throw wrong(name, "is not base64: " + e.getMessage());
            }
        } else {
            bytes = s.getBytes(StandardCharsets.UTF_8);
        }
        if (bytes.length > MAX_CONTENT) {
            throw tooLarge(name, bytes.length);
        }
        return bytes;
    }

    private ToolError tooLarge(String name, long bytes) {
        return new ToolError(tool + ": '" + name + "' is " + bytes + " bytes, more than the " + MAX_CONTENT
                + " (4 MiB) one call may carry", "copy large files with `kosa8 cp`, or make them in the sandbox");
    }

    /** The {@code encoding} argument: utf-8 (default) or base64. */
    public String encoding() {
        String e = optionalText("encoding", 16, "utf-8").toLowerCase(java.util.Locale.ROOT);
        if (!e.equals("utf-8") && !e.equals("base64")) {
            throw wrong("encoding", "must be utf-8 or base64, not '" + e + "'");
        }
        return e;
    }
}
