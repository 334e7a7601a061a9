package dev.kosa8.secrets;

import dev.kosa8.host.KosaException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Secret values in the macOS login keychain, as generic passwords of service
 * {@code kosa8} and account {@code NAME}, driven through
 * {@code /usr/bin/security}.
 *
 * <p>{@code security add-generic-password -w VALUE} would put the value on a
 * command line, where {@code ps} shows it to every user. So the add command
 * is written to {@code security -i} (its interactive mode, reading commands
 * from standard input) instead; {@link #addCommand} quotes the value for that
 * parser, which takes {@code "..."} with backslash escapes, and lines of
 * fewer than 4096 bytes. Reading and removing need no value on the command
 * line and run {@code security} directly.
 *
 * <p>Not tested on a Mac: kosa8's tests run on Linux. The unit tests cover
 * the command text; {@link #put} reads the value back and compares, so a
 * quoting mistake shows up as an error at {@code kosa8 secret set}, never as
 * a wrong key sent later.
 */
final class KeychainValues implements SecretValues {
    static final String ID = "keychain";
    static final String SECURITY = "/usr/bin/security";
    static final String SERVICE = "kosa8";
    /** security's interactive mode reads lines into a 4096-byte buffer. */
    static final int MAX_LINE = 4000;
    /** security's status for errSecItemNotFound. */
    private static final int NOT_FOUND = 44;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @Override
    public String id() {
        return ID;
    }

    @Override
    public String description() {
        return "macOS keychain (service kosa8)";
    }

    /** The line for {@code security -i} that adds or replaces ({@code -U}) the value. */
    static String addCommand(String name, String value) {
        return "add-generic-password -U -s " + SERVICE + " -a " + quote(name) + " -w " + quote(value) + "\n";
    }

    /** One argument for security's line parser: double quotes, and a backslash before {@code "} and {@code \}. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\');
            }
            b.append(c);
        }
        return b.append('"').toString();
    }

    @Override
    public void put(String name, String value) {
        String line = addCommand(name, value);
        if (line.length() > MAX_LINE) {
            throw new KosaException(KosaException.Kind.USAGE, "the value of " + name + " is too long for the "
                    + "macOS keychain tool (" + value.length() + " characters)",
                    "keep it in kosa8's file instead: KOSA8_SECRET_STORE=file kosa8 secret set " + name + " ...");
        }
        var r = Subprocess.run(List.of(SECURITY, "-i"), Map.of(), line, TIMEOUT, "storing " + name + " in the keychain");
        if (r.exit() != 0) {
            throw failure("cannot store " + name, r);
        }
        if (!get(name).map(value::equals).orElse(false)) {
            throw new KosaException(KosaException.Kind.HOST, "the keychain holds something else than the value "
                    + "just stored for " + name, "please report this; meanwhile KOSA8_SECRET_STORE=file works");
        }
    }

    @Override
    public Optional<String> get(String name) {
        var r = Subprocess.run(List.of(SECURITY, "find-generic-password", "-s", SERVICE, "-a", name, "-w"), Map.of(),
                "", TIMEOUT, "reading " + name + " from the keychain");
        if (r.exit() == 0) {
            String v = r.out();
            return Optional.of(v.endsWith("\n") ? v.substring(0, v.length() - 1) : v);
        }
        if (r.exit() == NOT_FOUND) {
            return Optional.empty();
        }
        throw failure("cannot read " + name, r);
    }

    @Override
    public void remove(String name) {
        var r = Subprocess.run(List.of(SECURITY, "delete-generic-password", "-s", SERVICE, "-a", name), Map.of(), "",
                TIMEOUT, "removing " + name + " from the keychain");
        if (r.exit() != 0 && r.exit() != NOT_FOUND) {
            throw failure("cannot remove " + name, r);
        }
    }

    private static KosaException failure(String what, Subprocess.Result r) {
        return new KosaException(KosaException.Kind.HOST, what + ": security exited with status " + r.exit()
                + (r.err().isEmpty() ? "" : ": " + r.err().lines().findFirst().orElse("")),
                "check that the login keychain is unlocked, or set KOSA8_SECRET_STORE=file");
    }
}
