package dev.kosa8.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.KosaException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Dockerfile as kosa8 builds it: the {@code ARG}s before {@code FROM}, one
 * {@code FROM}, and the instructions after it. Parsed as Docker parses it
 * (comments, line continuations, the JSON and shell forms, parser
 * directives), but only the instructions kosa8 supports are accepted:
 * {@code FROM}, {@code RUN}, {@code ENV}, {@code ARG}, {@code COPY},
 * {@code ADD}, {@code WORKDIR}, {@code USER}, {@code LABEL},
 * {@code ENTRYPOINT} and {@code CMD}. Anything else is an error that names
 * its line: a build never silently does less than the file says.
 */
public record Dockerfile(List<Instruction.Arg> globalArgs, Instruction.From from, List<Instruction> body) {
    /** Larger Dockerfiles are not written by hand. */
    public static final int MAX_BYTES = 1 << 20;
    private static final Pattern DIRECTIVE = Pattern.compile("#\\s*([A-Za-z]+)\\s*=\\s*(.*?)\\s*");
    private static final Pattern ARG_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern HEREDOC = Pattern.compile("<<-?\\s*['\"]?[A-Za-z_][A-Za-z0-9_]*['\"]?.*",
            Pattern.DOTALL);
    private static final ObjectMapper JSON = new ObjectMapper();

    public Dockerfile {
        globalArgs = List.copyOf(globalArgs);
        body = List.copyOf(body);
    }

    /** Parses a Dockerfile; {@code name} (its path) is named in every error. */
    public static Dockerfile parse(String text, String name) {
        if (text.length() > MAX_BYTES) {
            throw error(name, 0, "is larger than " + MAX_BYTES + " bytes");
        }
        List<Instruction.Arg> globals = new ArrayList<>();
        Instruction.From from = null;
        List<Instruction> body = new ArrayList<>();
        String[] lines = text.split("\r?\n", -1);
        boolean directives = true;
        int i = 0;
        while (i < lines.length) {
            String raw = lines[i];
            int start = i + 1;
            i++;
            String trimmed = raw.strip();
            if (directives) {
                Matcher m = DIRECTIVE.matcher(trimmed);
                if (m.matches()) {
                    directive(name, start, m.group(1).toLowerCase(Locale.ROOT), m.group(2));
                    continue;
                }
                directives = false;
            }
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            StringBuilder logical = new StringBuilder();
            String line = raw.stripTrailing();
            while (line.endsWith("\\")) {
                logical.append(line, 0, line.length() - 1);
                if (i >= lines.length) {
                    line = "";
                    break;
                }
                String next = lines[i++];
                String nt = next.strip();
                while (nt.startsWith("#") || nt.isEmpty() && i < lines.length) {
                    // comment and empty lines inside a continuation are dropped, as Docker does
                    next = lines[i++];
                    nt = next.strip();
                }
                line = next.stripTrailing();
            }
            logical.append(line);
            Instruction in = instruction(name, start, logical.toString().strip());
            if (in instanceof Instruction.From f) {
                if (from != null) {
                    throw error(name, start, "a second FROM: multi-stage builds are not supported (one FROM per "
                            + "Dockerfile)");
                }
                from = f;
            } else if (from == null) {
                if (in instanceof Instruction.Arg a) {
                    globals.add(a);
                } else {
                    throw error(name, start, keyword(in) + " before FROM: only ARG may come before FROM");
                }
            } else {
                body.add(in);
            }
        }
        if (from == null) {
            throw error(name, 0, "has no FROM: name the base image, such as FROM kosa8/debian");
        }
        return new Dockerfile(globals, from, body);
    }

    private static void directive(String name, int line, String key, String value) {
        switch (key) {
            case "syntax", "check" -> {
                // a frontend image or lint settings: nothing kosa8 uses
            }
            case "escape" -> {
                if (!value.equals("\\")) {
                    throw error(name, line, "escape=" + value + ": only the default escape character \\ is "
                            + "supported");
                }
            }
            default -> {
                // Docker treats an unknown directive as a comment
            }
        }
    }

    private static String keyword(Instruction in) {
        return in.text().split("\\s+", 2)[0].toUpperCase(Locale.ROOT);
    }

    private static Instruction instruction(String name, int line, String text) {
        String[] parts = text.split("\\s+", 2);
        String keyword = parts[0].toUpperCase(Locale.ROOT);
        String args = parts.length > 1 ? parts[1].strip() : "";
        return switch (keyword) {
            case "FROM" -> from(name, line, text, args);
            case "ARG" -> arg(name, line, text, args);
            case "ENV" -> {
                need(name, line, keyword, args);
                yield new Instruction.Env(line, text, args);
            }
            case "LABEL" -> {
                need(name, line, keyword, args);
                yield new Instruction.Label(line, text, args);
            }
            case "RUN" -> run(name, line, text, args);
            case "COPY", "ADD" -> copy(name, line, text, keyword, args);
            case "WORKDIR" -> {
                need(name, line, keyword, args);
                yield new Instruction.Workdir(line, text, args);
            }
            case "USER" -> {
                need(name, line, keyword, args);
                yield new Instruction.User(line, text, args);
            }
            case "CMD", "ENTRYPOINT" -> {
                need(name, line, keyword, args);
                List<String> json = jsonForm(args);
                yield json != null ? new Instruction.Command(line, text, keyword, json, false)
                        : new Instruction.Command(line, text, keyword, List.of("/bin/sh", "-c", args), true);
            }
            case "EXPOSE", "VOLUME", "HEALTHCHECK", "ONBUILD", "STOPSIGNAL", "SHELL", "MAINTAINER" ->
                    throw error(name, line, keyword + " is not supported by kosa8 image build (supported: FROM, RUN, "
                            + "ENV, ARG, COPY, ADD, WORKDIR, USER, LABEL, ENTRYPOINT, CMD)");
            default -> throw error(name, line, "unknown instruction " + parts[0] + " (supported: FROM, RUN, ENV, ARG, "
                    + "COPY, ADD, WORKDIR, USER, LABEL, ENTRYPOINT, CMD)");
        };
    }

    private static void need(String name, int line, String keyword, String args) {
        if (args.isEmpty()) {
            throw error(name, line, keyword + " needs an argument");
        }
    }

    private static Instruction.From from(String name, int line, String text, String args) {
        if (args.startsWith("--")) {
            throw error(name, line, "FROM " + args.split("\\s+")[0] + ": flags are not supported (kosa8 picks the "
                    + "platform of its own guests)");
        }
        String[] words = args.split("\\s+");
        if (words.length == 3 && words[1].equalsIgnoreCase("AS")) {
            return new Instruction.From(line, text, words[0]); // a stage name alone is harmless in one stage
        }
        if (words.length != 1 || words[0].isEmpty()) {
            throw error(name, line, "FROM takes one image, such as FROM kosa8/debian");
        }
        return new Instruction.From(line, text, words[0]);
    }

    private static Instruction.Arg arg(String name, int line, String text, String args) {
        need(name, line, "ARG", args);
        String[] kv = args.split("=", 2);
        String key = kv[0].strip();
        if (!ARG_NAME.matcher(key).matches() || args.split("\\s+").length > 1 && kv.length == 1) {
            throw error(name, line, "ARG takes one NAME or NAME=default, not '" + args + "'");
        }
        // the default as written: substituted when the build reaches it, with the variables before it
        return new Instruction.Arg(line, text, key, kv.length > 1 ? kv[1] : null);
    }

    private static Instruction.Run run(String name, int line, String text, String args) {
        need(name, line, "RUN", args);
        if (args.startsWith("--")) {
            throw error(name, line, "RUN " + args.split("[\\s=]+")[0] + " is not supported (RUN's network is the "
                    + "build's --allow list; there are no mounts)");
        }
        if (HEREDOC.matcher(args).matches()) {
            throw error(name, line, "RUN with a here-document (<<) is not supported: write the script to a file, "
                    + "COPY it and RUN it");
        }
        List<String> json = jsonForm(args);
        return json != null ? new Instruction.Run(line, text, json, false)
                : new Instruction.Run(line, text, List.of("/bin/sh", "-c", args), true);
    }

    private static Instruction.Copy copy(String name, int line, String text, String keyword, String args) {
        String rest = args;
        String chown = "";
        String chmod = "";
        while (rest.startsWith("--")) {
            String[] fr = rest.split("\\s+", 2);
            String flag = fr[0];
            rest = fr.length > 1 ? fr[1].strip() : "";
            if (flag.startsWith("--chown=")) {
                chown = flag.substring("--chown=".length());
            } else if (flag.startsWith("--chmod=")) {
                chmod = flag.substring("--chmod=".length());
                if (!chmod.matches("[0-7]{3,4}")) {
                    throw error(name, line, keyword + " --chmod=" + chmod + ": give an octal mode such as 0755");
                }
            } else if (flag.startsWith("--from")) {
                throw error(name, line, keyword + " --from: multi-stage builds are not supported; copy files of the "
                        + "build context");
            } else {
                throw error(name, line, keyword + " " + flag.split("=")[0] + " is not supported (supported: --chown, "
                        + "--chmod)");
            }
        }
        List<String> json = jsonForm(rest);
        int count = json != null ? json.size() : rest.split("\\s+").length;
        if (rest.isEmpty() || count < 2) {
            throw error(name, line, keyword + " needs a source and a destination");
        }
        return new Instruction.Copy(line, text, keyword, json == null ? rest : null, json, chown, chmod);
    }

    /** The strings of a JSON array form, or null when {@code args} is not one (then it is the shell form). */
    private static List<String> jsonForm(String args) {
        if (!args.startsWith("[")) {
            return null;
        }
        try {
            JsonNode n = JSON.readTree(args);
            if (n == null || !n.isArray() || n.isEmpty()) {
                return null;
            }
            List<String> out = new ArrayList<>();
            for (JsonNode e : n) {
                if (!e.isTextual()) {
                    return null;
                }
                out.add(e.asText());
            }
            return out;
        } catch (java.io.IOException e) {
            return null;
        }
    }

    static KosaException error(String name, int line, String what) {
        return new KosaException(KosaException.Kind.USAGE, name + (line > 0 ? " line " + line : "") + ": " + what,
                "fix the Dockerfile; docs/images.md lists what kosa8 image build supports");
    }
}
