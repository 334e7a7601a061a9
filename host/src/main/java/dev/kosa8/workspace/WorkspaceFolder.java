package dev.kosa8.workspace;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Checks the folder a user asks to share with a sandbox. The folder is the
 * one part of the host the agent can change, so a few choices are refused
 * outright: the whole file system, and the user's home directory, which holds
 * the very keys (~/.ssh, ~/.aws, shell history) a sandbox exists to keep away
 * from the agent.
 */
public final class WorkspaceFolder {
    private WorkspaceFolder() {
    }

    /**
     * @param requested the folder as the client sent it; empty for no workspace
     * @param home      the user's home directory
     * @return the folder's real path (symlinks resolved), or empty for none
     */
    public static String check(String requested, Path home) {
        if (requested == null || requested.isEmpty()) {
            return "";
        }
        Path p = Path.of(requested);
        if (!p.isAbsolute()) {
            throw new KosaException(KosaException.Kind.USAGE, "the workspace folder must be an absolute path: "
                    + requested, "pass --workspace with a full path, or none");
        }
        Path real;
        try {
            real = p.toRealPath();
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, "the workspace folder " + requested
                    + " does not exist", "create it, or pass --workspace none for a sandbox with no folder");
        }
        if (!Files.isDirectory(real)) {
            throw new KosaException(KosaException.Kind.USAGE, "the workspace " + requested + " is not a folder",
                    "pass --workspace with a directory, or none");
        }
        if (real.getNameCount() == 0) {
            throw new KosaException(KosaException.Kind.USAGE, "refusing to share the whole file system (/)"
                    + " with a sandbox", "run kosa8 in your project's folder, or pass --workspace DIR or none");
        }
        Path realHome = realOrSelf(home);
        if (real.equals(realHome)) {
            throw new KosaException(KosaException.Kind.USAGE, "refusing to share your home directory " + real
                    + " with a sandbox: it holds your keys and settings",
                    "run kosa8 in a project folder, or pass --workspace DIR or none");
        }
        if (real.toString().indexOf('\n') >= 0 || real.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8)
                .length > 1024) {
            throw new KosaException(KosaException.Kind.USAGE, "the workspace path is too long or has a newline: "
                    + real, "use a shorter folder path");
        }
        return real.toString();
    }

    private static Path realOrSelf(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize();
        }
    }
}
