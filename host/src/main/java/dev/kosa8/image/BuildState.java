package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Walks a Dockerfile's instructions in order, as Docker evaluates them: the
 * variables each instruction sees ({@code ENV} over {@code ARG}), the image's
 * config after it, and what the step asks of the build ({@link PlannedStep}).
 * Pure: no file or sandbox is touched, so a plan can be checked before any
 * work starts.
 */
public final class BuildState {
    private final String file;
    private final Map<String, String> buildArgs;
    private final Map<String, String> globals = new HashMap<>();
    private final Map<String, String> args = new LinkedHashMap<>();
    private final Set<String> consumed = new LinkedHashSet<>();
    private ImageConfig config;
    private boolean cmdFromBase;

    /**
     * @param file      the Dockerfile's name, for errors
     * @param buildArgs {@code --build-arg} values
     */
    public BuildState(String file, Dockerfile dockerfile, Map<String, String> buildArgs) {
        this.file = file;
        this.buildArgs = Map.copyOf(buildArgs);
        for (Instruction.Arg a : dockerfile.globalArgs()) {
            String v = buildArgs.containsKey(a.name()) ? buildArgs.get(a.name())
                    : a.defaultValue() == null ? null : substitute(a, a.defaultValue(), globals::get);
            if (buildArgs.containsKey(a.name())) {
                consumed.add(a.name());
            }
            if (v != null) {
                globals.put(a.name(), v);
            }
        }
    }

    /** The base image's name as the FROM line gives it, global ARGs substituted. */
    public String base(Instruction.From from) {
        String image = substitute(from, from.image(), globals::get).strip();
        if (image.isEmpty()) {
            throw Dockerfile.error(file, from.line(), "FROM names no image after its variables are substituted");
        }
        return image;
    }

    /** Starts the body from the base image's config. */
    public void start(ImageConfig base) {
        config = base;
        cmdFromBase = !base.cmd().isEmpty();
    }

    public ImageConfig config() {
        return config;
    }

    /** Build arguments given that no ARG declared. */
    public List<String> unusedBuildArgs() {
        List<String> out = new ArrayList<>();
        for (String k : buildArgs.keySet()) {
            if (!consumed.contains(k)) {
                out.add(k);
            }
        }
        return out;
    }

    /** The variables instructions see: ENV over ARG. */
    private String variable(String name) {
        String env = config.envMap().get(name);
        return env != null ? env : args.get(name);
    }

    /** Applies one instruction of the body and says what it asks of the build. */
    public PlannedStep apply(Instruction in) {
        return switch (in) {
            case Instruction.Arg a -> {
                String v;
                if (buildArgs.containsKey(a.name())) {
                    v = buildArgs.get(a.name());
                    consumed.add(a.name());
                } else if (a.defaultValue() != null) {
                    v = substitute(a, a.defaultValue(), this::variable);
                } else {
                    v = globals.get(a.name());
                }
                if (v != null) {
                    args.put(a.name(), v);
                } else {
                    args.remove(a.name());
                }
                yield new PlannedStep.ConfigOnly(a.line(), a.text(), config, "ARG " + a.name() + "="
                        + (v == null ? "(unset)" : v));
            }
            case Instruction.Env e -> {
                for (Map.Entry<String, String> kv : pairs(e, e.args(), true)) {
                    config = config.withEnv(kv.getKey(), kv.getValue());
                }
                yield new PlannedStep.ConfigOnly(e.line(), e.text(), config, "ENV " + config.env());
            }
            case Instruction.Label l -> {
                for (Map.Entry<String, String> kv : pairs(l, l.args(), false)) {
                    config = config.withLabel(kv.getKey(), kv.getValue());
                }
                yield new PlannedStep.ConfigOnly(l.line(), l.text(), config, "LABEL " + config.labels());
            }
            case Instruction.User u -> {
                String user = single(u, u.user());
                config = config.withUser(user);
                yield new PlannedStep.ConfigOnly(u.line(), u.text(), config, "USER " + user);
            }
            case Instruction.Workdir w -> {
                String dir = absolute(single(w, w.path()));
                config = config.withWorkingDir(dir);
                yield new PlannedStep.Workdir(w.line(), w.text(), config, dir);
            }
            case Instruction.Command c -> {
                if (c.entrypoint()) {
                    config = config.withEntrypoint(c.argv());
                    if (cmdFromBase) {
                        config = config.withCmd(List.of()); // Docker: a new ENTRYPOINT drops the base's CMD
                    }
                } else {
                    config = config.withCmd(c.argv());
                }
                cmdFromBase = false;
                yield new PlannedStep.ConfigOnly(c.line(), c.text(), config, c.keyword() + " " + c.argv());
            }
            case Instruction.Run r -> {
                Map<String, String> env = new LinkedHashMap<>(args);
                env.putAll(config.envMap());
                yield new PlannedStep.Run(r.line(), r.text(), config, r.argv(), env,
                        config.workingDir().isEmpty() ? "/" : config.workingDir(), config.user());
            }
            case Instruction.Copy c -> copy(c);
            case Instruction.From f -> throw Dockerfile.error(file, f.line(), "a second FROM");
        };
    }

    private PlannedStep.Copy copy(Instruction.Copy c) {
        List<String> words;
        if (c.json() != null) {
            words = new ArrayList<>();
            for (String s : c.json()) {
                words.add(substitute(c, s, this::variable));
            }
        } else {
            words = split(c, c.args());
        }
        if (words.size() < 2) {
            throw Dockerfile.error(file, c.line(), c.keyword() + " needs a source and a destination");
        }
        List<String> sources = words.subList(0, words.size() - 1);
        for (String s : sources) {
            if (s.matches("(?i)[a-z][a-z0-9+.-]*://.*")) {
                throw Dockerfile.error(file, c.line(), c.keyword() + " of a URL (" + s + ") is not supported: "
                        + "fetch it with RUN curl, allowing its host with --allow");
            }
            if (c.keyword().equals("ADD") && s.matches("(?i).*\\.(tar|tar\\.gz|tgz|tar\\.xz|txz|tar\\.bz2|tbz2|"
                    + "tar\\.zst)")) {
                throw Dockerfile.error(file, c.line(), "ADD of an archive (" + s + ") would unpack it, which kosa8 "
                        + "does not do: COPY it and RUN tar");
            }
        }
        String dest = words.getLast();
        boolean dir = dest.endsWith("/") || sources.size() > 1;
        String abs = absolute(dest);
        if (dir && !abs.endsWith("/")) {
            abs = abs + "/";
        }
        String chown = c.chown().isEmpty() ? "" : single(c, c.chown());
        return new PlannedStep.Copy(c.line(), c.text(), config, c.keyword(), sources, abs, chown, c.chmod());
    }

    /** A path in the image: absolute, or under the working directory; {@code .} and {@code ..} resolved. */
    private String absolute(String path) {
        String base = config.workingDir().isEmpty() ? "/" : config.workingDir();
        String joined = path.startsWith("/") ? path : base + "/" + path;
        List<String> parts = new ArrayList<>();
        for (String p : joined.split("/")) {
            if (p.isEmpty() || p.equals(".")) {
                continue;
            }
            if (p.equals("..")) {
                if (!parts.isEmpty()) {
                    parts.removeLast();
                }
            } else {
                parts.add(p);
            }
        }
        return "/" + String.join("/", parts) + (path.endsWith("/") && !parts.isEmpty() ? "/" : "");
    }

    private String single(Instruction in, String text) {
        List<String> words = split(in, text);
        if (words.size() != 1) {
            throw Dockerfile.error(file, in.line(), "expected one value, not '" + text + "'");
        }
        return words.getFirst();
    }

    private List<String> split(Instruction in, String text) {
        try {
            return ShellWords.split(text, this::variable);
        } catch (IllegalArgumentException e) {
            throw Dockerfile.error(file, in.line(), e.getMessage());
        }
    }

    private String substitute(Instruction in, String text, java.util.function.Function<String, String> vars) {
        try {
            return ShellWords.substitute(text, vars);
        } catch (IllegalArgumentException e) {
            throw Dockerfile.error(file, in.line(), e.getMessage());
        }
    }

    /** {@code k=v} words; with {@code legacy}, {@code ENV k v…} too (the value the rest of the line). */
    private List<Map.Entry<String, String>> pairs(Instruction in, String text, boolean legacy) {
        List<String> words = split(in, text);
        List<Map.Entry<String, String>> out = new ArrayList<>();
        if (legacy && !words.isEmpty() && !words.getFirst().contains("=")) {
            if (words.size() < 2) {
                throw Dockerfile.error(file, in.line(), "ENV " + words.getFirst() + " needs a value");
            }
            out.add(Map.entry(words.getFirst(), String.join(" ", words.subList(1, words.size()))));
            return out;
        }
        for (String w : words) {
            int eq = w.indexOf('=');
            if (eq <= 0) {
                throw Dockerfile.error(file, in.line(), "'" + w + "' is not NAME=value");
            }
            out.add(Map.entry(w.substring(0, eq), w.substring(eq + 1)));
        }
        if (out.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, file + " line " + in.line() + ": nothing to set", "");
        }
        return out;
    }
}
