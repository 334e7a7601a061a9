package dev.kosa8.cli;

import java.nio.file.Path;
import java.util.List;

/**
 * A project's settings for {@code run} and {@code create} from {@code .kosa8/config.toml} in its folder
 * (docs/cli.md, "Per-project settings"). Every field is optional: null or an empty list when the file leaves
 * it out. The command line overrides each setting it gives, whole: {@code --allow} replaces the file's list.
 *
 * @param file the file it came from, for messages; null when there is none
 */
record ProjectConfig(Path file, String image, Integer cpus, String memory, String net, List<String> allow,
                     List<String> passthrough, List<String> secrets) {
    static final ProjectConfig NONE = new ProjectConfig(null, null, null, null, null, List.of(), List.of(), List.of());

    ProjectConfig {
        allow = allow == null ? List.of() : List.copyOf(allow);
        passthrough = passthrough == null ? List.of() : List.copyOf(passthrough);
        secrets = secrets == null ? List.of() : List.copyOf(secrets);
    }

    /** The settings a file may hold, in the order `kosa8 config show` prints them. */
    static final List<String> KEYS = List.of("image", "cpus", "memory", "net", "allow", "passthrough", "secrets");
}
