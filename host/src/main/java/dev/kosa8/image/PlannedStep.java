package dev.kosa8.image;

import java.util.List;
import java.util.Map;

/**
 * What one Dockerfile instruction asks of the build once its variables are
 * substituted: a change to the image's config only, or a change to its disk
 * made in the build sandbox. {@link #key()} is the instruction's part of the
 * step's cache key: everything that decides its result except the files a
 * {@code COPY} reads, which the build hashes itself.
 */
public sealed interface PlannedStep {
    /** The instruction's line in the Dockerfile and its text, for progress. */
    int line();

    String text();

    /** The config after this step. */
    ImageConfig config();

    /** What decides the step's result, as one canonical string. */
    String key();

    /** {@code ENV}, {@code ARG}, {@code LABEL}, {@code USER}, {@code CMD}, {@code ENTRYPOINT}: no disk change. */
    record ConfigOnly(int line, String text, ImageConfig config, String key) implements PlannedStep {
    }

    /** {@code RUN}: the command, with the variables, directory and user it runs with. */
    record Run(int line, String text, ImageConfig config, List<String> argv, Map<String, String> env, String workdir,
               String user) implements PlannedStep {
        public Run {
            argv = List.copyOf(argv);
            env = Map.copyOf(env);
        }

        @Override
        public String key() {
            return "RUN " + argv + " env=" + new java.util.TreeMap<>(env) + " workdir=" + workdir + " user=" + user;
        }
    }

    /**
     * {@code COPY}/{@code ADD}: sources in the build context, the absolute destination (ending in {@code /} when
     * it is a directory by how it was written), and the owner and mode the files get.
     */
    record Copy(int line, String text, ImageConfig config, String keyword, List<String> sources, String destination,
                String chown, String chmod) implements PlannedStep {
        public Copy {
            sources = List.copyOf(sources);
        }

        @Override
        public String key() {
            return keyword + " " + sources + " -> " + destination + " chown=" + chown + " chmod=" + chmod;
        }
    }

    /** {@code WORKDIR}: the directory, made if missing, and commands start there. */
    record Workdir(int line, String text, ImageConfig config, String path) implements PlannedStep {
        @Override
        public String key() {
            return "WORKDIR " + path;
        }
    }
}
