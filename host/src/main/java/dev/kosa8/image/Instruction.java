package dev.kosa8.image;

import java.util.List;

/**
 * One instruction of a Dockerfile, as kosa8 supports it, with the line it
 * starts on. Arguments are kept as written: variables are substituted when
 * the build reaches the instruction ({@link BuildState}), since they depend on
 * the {@code ENV} and {@code ARG} before it.
 */
public sealed interface Instruction {
    /** The line of the Dockerfile the instruction starts on, from 1. */
    int line();

    /** The instruction as written, one line, for progress and the cache key. */
    String text();

    /** {@code FROM image}: the base, a kosa8 image's name or a registry reference. */
    record From(int line, String text, String image) implements Instruction {
    }

    /** {@code ARG name[=default]}; {@code defaultValue} null when none is given. */
    record Arg(int line, String text, String name, String defaultValue) implements Instruction {
    }

    /** {@code ENV k=v …} (or the old {@code ENV k v}). */
    record Env(int line, String text, String args) implements Instruction {
    }

    /** {@code LABEL k=v …}. */
    record Label(int line, String text, String args) implements Instruction {
    }

    /**
     * {@code RUN}: in shell form {@code argv} is {@code ["/bin/sh", "-c", command]}; {@code shell} says which
     * form was written.
     */
    record Run(int line, String text, List<String> argv, boolean shell) implements Instruction {
        public Run {
            argv = List.copyOf(argv);
        }
    }

    /**
     * {@code COPY} or {@code ADD} of files of the build context.
     *
     * @param args  the sources and the destination as written (shell form), or null
     * @param json  the sources and the destination of the JSON form, or null
     * @param chown {@code user[:group]} the files get, empty for root
     * @param chmod the mode the files get (octal), empty to keep each file's own
     */
    record Copy(int line, String text, String keyword, String args, List<String> json, String chown, String chmod)
            implements Instruction {
        public Copy {
            json = json == null ? null : List.copyOf(json);
        }
    }

    /** {@code WORKDIR path}. */
    record Workdir(int line, String text, String path) implements Instruction {
    }

    /** {@code USER user[:group]}. */
    record User(int line, String text, String user) implements Instruction {
    }

    /** {@code CMD} or {@code ENTRYPOINT}; {@code shell} as for {@link Run}. */
    record Command(int line, String text, String keyword, List<String> argv, boolean shell) implements Instruction {
        public Command {
            argv = List.copyOf(argv);
        }

        public boolean entrypoint() {
            return keyword.equals("ENTRYPOINT");
        }
    }
}
