package dev.kosa8.image;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How commands run in an image's sandboxes, as an OCI image's config says it
 * and a Dockerfile's {@code ENV}, {@code WORKDIR}, {@code USER},
 * {@code ENTRYPOINT}, {@code CMD} and {@code LABEL} set it.
 *
 * @param env        {@code NAME=value}, in order; every command gets them (under what it sets itself)
 * @param workingDir where commands start; empty: as without an image (the workspace, else /)
 * @param user       who commands run as ({@code name}, {@code uid}, {@code name:group}); empty for root
 * @param entrypoint prepended to the command; empty for none
 * @param cmd        the command when none is given ({@code kosa8 run --image NAME} alone)
 * @param labels     the image's labels
 */
public record ImageConfig(List<String> env, String workingDir, String user, List<String> entrypoint,
                          List<String> cmd, Map<String, String> labels) {
    /** The kosa8/debian image's: nothing set, every command as without an image. */
    public static final ImageConfig NONE = new ImageConfig(List.of(), "", "", List.of(), List.of(), Map.of());

    public ImageConfig {
        env = env == null ? List.of() : List.copyOf(env);
        workingDir = workingDir == null ? "" : workingDir;
        user = user == null ? "" : user;
        entrypoint = entrypoint == null ? List.of() : List.copyOf(entrypoint);
        cmd = cmd == null ? List.of() : List.copyOf(cmd);
        labels = labels == null ? Map.of() : Map.copyOf(new TreeMap<>(labels));
    }

    /** The variables, later ones over earlier ones of the same name. */
    public Map<String, String> envMap() {
        Map<String, String> m = new LinkedHashMap<>();
        for (String e : env) {
            int eq = e.indexOf('=');
            if (eq > 0) {
                m.put(e.substring(0, eq), e.substring(eq + 1));
            }
        }
        return m;
    }

    /** This config with {@code name} set to {@code value} (replacing an earlier value). */
    public ImageConfig withEnv(String name, String value) {
        List<String> next = new ArrayList<>();
        for (String e : env) {
            if (!e.startsWith(name + "=")) {
                next.add(e);
            }
        }
        next.add(name + "=" + value);
        return new ImageConfig(next, workingDir, user, entrypoint, cmd, labels);
    }

    public ImageConfig withWorkingDir(String dir) {
        return new ImageConfig(env, dir, user, entrypoint, cmd, labels);
    }

    public ImageConfig withUser(String u) {
        return new ImageConfig(env, workingDir, u, entrypoint, cmd, labels);
    }

    public ImageConfig withEntrypoint(List<String> e) {
        return new ImageConfig(env, workingDir, user, e, cmd, labels);
    }

    public ImageConfig withCmd(List<String> c) {
        return new ImageConfig(env, workingDir, user, entrypoint, c, labels);
    }

    public ImageConfig withLabel(String key, String value) {
        Map<String, String> next = new TreeMap<>(labels);
        next.put(key, value);
        return new ImageConfig(env, workingDir, user, entrypoint, cmd, next);
    }

    /**
     * What runs for {@code args}, as Docker runs a container: the entrypoint, then {@code args} or, when none
     * are given, the default command. Empty when there is nothing to run.
     */
    public List<String> command(List<String> args) {
        List<String> out = new ArrayList<>(entrypoint);
        out.addAll(args.isEmpty() ? cmd : args);
        return out;
    }
}
