package dev.kosa8.cli;

import dev.kosa8.host.KosaException;
import dev.kosa8.secrets.SecretStore;
import java.io.Console;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * Where {@code kosa8 secret set} gets the key: from standard input when that
 * is a pipe or a file, else typed twice at the terminal without echo. Never
 * from an argument, which every user could read in {@code /proc}; and never
 * read with echo from a terminal, which is what would happen if the output
 * were redirected while the input is still the keyboard.
 */
final class SecretInput {
    private SecretInput() {
    }

    static String read(String name, Supplier<InputStream> stdin) {
        Console console = System.console();
        if (console != null && console.isTerminal()) {
            return prompt(console, name);
        }
        if (stdinIsTerminal()) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot ask for the key: the input is a terminal but "
                    + "the output is not, so it would be shown as you type", pipeHint(name));
        }
        byte[] bytes;
        try {
            bytes = stdin.get().readNBytes(SecretStore.MAX_LENGTH + 3);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot read the key from standard input: "
                    + e.getMessage(), pipeHint(name), e);
        }
        if (bytes.length == SecretStore.MAX_LENGTH + 3) {
            throw new KosaException(KosaException.Kind.USAGE, "the key on standard input is longer than "
                    + SecretStore.MAX_LENGTH + " characters", "pipe in the key alone, not a whole file of them");
        }
        String value = stripOneNewline(new String(bytes, StandardCharsets.UTF_8));
        if (value.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "no key came on standard input", pipeHint(name));
        }
        return value;
    }

    /** What {@code echo} and files add at the end: one {@code \n} or {@code \r\n}, and only one. */
    static String stripOneNewline(String s) {
        if (s.endsWith("\r\n")) {
            return s.substring(0, s.length() - 2);
        }
        return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
    }

    private static String prompt(Console console, String name) {
        char[] first = console.readPassword("Key for %s (not shown): ", name);
        if (first == null) {
            throw new KosaException(KosaException.Kind.USAGE, "no key typed", pipeHint(name));
        }
        char[] second = console.readPassword("The same again, to check: ");
        try {
            if (!Arrays.equals(first, second)) {
                throw new KosaException(KosaException.Kind.USAGE, "the two keys typed differ",
                        "run it again, or pipe the key in: " + pipeHint(name));
            }
            return new String(first);
        } finally {
            Arrays.fill(first, '\0');
            if (second != null) {
                Arrays.fill(second, '\0');
            }
        }
    }

    /** True when standard input is a terminal (Linux; elsewhere the console check above decides). */
    private static boolean stdinIsTerminal() {
        try {
            String target = Files.readSymbolicLink(Path.of("/proc/self/fd/0")).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    private static String pipeHint(String name) {
        return "printf %s \"$KEY\" | kosa8 secret set " + name + " --host HOST (or < a file holding the key)";
    }
}
