package dev.kosa8.cli;

import picocli.CommandLine;

/**
 * A usage error of a picocli command, made here so that the commands the hot
 * path shares ({@link HotPath}) do not name picocli's exception classes:
 * picocli is compiled for Java 5, whose classes the JVM never keeps in the
 * AOT cache once linked, and verifying a class that throws one loads it from
 * the 47 MB jar (its central directory read, about 20 ms of every start).
 * Returned as a {@link RuntimeException}, so the caller's verifier has nothing
 * of picocli to load.
 */
final class UsageError {
    private UsageError() {
    }

    /** What picocli prints as a usage error of {@code cl}: the message, then the command's usage. */
    static RuntimeException of(CommandLine cl, String message) {
        return new CommandLine.ParameterException(cl, message);
    }
}
