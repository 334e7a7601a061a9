package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Whether a fork's folder is a copy or a copy-on-write view (docs/checkpoints.md, "What the copies share"):
 * what was asked ({@link Mode}), and, for {@code auto}, what the host can do.
 */
final class ForkFolderChoice {
    private ForkFolderChoice() {
    }

    /** How a fork's folder is to be made ({@code kosa8 fork --folder}). */
    enum Mode {
        /** A copy where clones can be made there or a folder is named; else a view, where views can be made. */
        AUTO,
        /** A copy in a folder of its own on the host, of clones where the file system has them. */
        COPY,
        /** A copy-on-write view of the checkpoint's folder, served to the guest; no folder of its own on the host. */
        VIEW;

        static Mode parse(String s) {
            return switch (s == null ? "" : s) {
                case "", "auto" -> AUTO;
                case "copy" -> COPY;
                case "view" -> VIEW;
                default -> throw new KosaException(KosaException.Kind.USAGE, "unknown folder mode: " + s,
                        "use --folder auto, copy or view");
            };
        }
    }

    /**
     * Whether the fork's folder is a view.
     *
     * @param named            whether a folder for it was named ({@code --workspace DIR}): a copy goes there
     * @param hasPlace         whether a copy has a place beside the parent's folder (not when that is a view)
     * @param clones           whether a copy there would be made of clones; asked for {@code auto} only
     * @param viewsUnavailable why views cannot be made here, empty when they can; asked only when it matters
     * @param note             told when {@code auto} falls back to a full copy, and why
     */
    static boolean view(Mode mode, boolean named, boolean hasPlace, BooleanSupplier clones,
                        Supplier<Optional<String>> viewsUnavailable, Consumer<String> note) {
        if (mode == Mode.COPY) {
            return false;
        }
        if (named) {
            if (mode == Mode.VIEW) {
                throw new KosaException(KosaException.Kind.USAGE, "a fork whose folder is a view has no folder of "
                        + "its own on the host, so --workspace names nothing", "drop --workspace, or fork with "
                        + "--folder copy");
            }
            return false;
        }
        if (mode == Mode.AUTO && hasPlace && clones.getAsBoolean()) {
            return false; // clones share the content at no cost, and the fork's folder is a real one
        }
        Optional<String> why = viewsUnavailable.get();
        if (why.isPresent()) {
            if (mode == Mode.VIEW || !hasPlace) {
                throw new KosaException(KosaException.Kind.HOST, "this host cannot make a copy-on-write view of a "
                        + "folder: " + why.get(), mode == Mode.VIEW ? "fork with --folder copy"
                        : "name a folder for the fork's copy with --workspace DIR");
            }
            note.accept("its folder is a full copy: views cannot be made here (" + why.get() + ")");
            return false;
        }
        return true;
    }
}
